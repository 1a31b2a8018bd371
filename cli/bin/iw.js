#!/usr/bin/env node
// The installed command: the compiled CLI (npm run build, or the package's own build).
import '../dist/main.js';
