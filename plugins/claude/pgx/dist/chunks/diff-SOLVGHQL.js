import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b}from"./chunk-T56KDZPX.js";import"./chunk-ML6RSHIW.js";import"./chunk-JEMZEB2A.js";import"./chunk-4WWEIV72.js";import"./chunk-AOOBVNRF.js";import"./chunk-VH6HZZNA.js";export{a as DIFF_BOUNDS,b as diffBranch};
