// zod/mini (not classic zod): the same validation at ~5% of the bundle size, which matters because hooks and exec
// start a process on every shell command (bench/run.mjs). Mini ships no messages by default: load English once.
// Modules import `* as z from 'zod/mini'` themselves: re-exporting the namespace would defeat tree-shaking.
import { config } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

config(en());
