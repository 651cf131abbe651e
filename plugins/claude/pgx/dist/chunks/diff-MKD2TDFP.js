import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b}from"./chunk-TDET6RWR.js";import"./chunk-YU26FRHE.js";import"./chunk-JEMZEB2A.js";import"./chunk-LZ6MCC3V.js";import"./chunk-NLMHY7S7.js";import"./chunk-VH6HZZNA.js";export{a as DIFF_BOUNDS,b as diffBranch};
