#!/usr/bin/env node
import '../dist/pgx.js';
