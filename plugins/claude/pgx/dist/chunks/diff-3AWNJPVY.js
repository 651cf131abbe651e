import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b}from"./chunk-ALRHBQMO.js";import"./chunk-GJMDG5YA.js";import"./chunk-JEMZEB2A.js";import"./chunk-OL2LLU6Z.js";import"./chunk-E45CQFLZ.js";import"./chunk-VH6HZZNA.js";export{a as DIFF_BOUNDS,b as diffBranch};
