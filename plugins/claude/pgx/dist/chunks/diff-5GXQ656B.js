import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b}from"./chunk-7WYQVPYW.js";import"./chunk-SU5LR3GY.js";import"./chunk-JEMZEB2A.js";import"./chunk-KWIILTBT.js";import"./chunk-E45CQFLZ.js";import"./chunk-VH6HZZNA.js";export{a as DIFF_BOUNDS,b as diffBranch};
