import { afterAll } from 'vitest';
import { removeLogDirs } from './helpers/logDirs.js';

// Every test file: the write-ahead log folders of the edges it started go when it ends.
afterAll(removeLogDirs);
