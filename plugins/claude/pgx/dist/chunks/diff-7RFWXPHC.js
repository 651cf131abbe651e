import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b}from"./chunk-FE5C23HH.js";import"./chunk-F2PB6AQO.js";import"./chunk-VH6HZZNA.js";export{a as DIFF_BOUNDS,b as diffBranch};
