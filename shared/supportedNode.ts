// Imported first by every entry point (ESM evaluates imports in order), so the Node version is
// checked before any other module, native ones included, is loaded.
import { exitUnlessSupportedNode } from './nodeVersion.js';

exitUnlessSupportedNode();
