import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b}from"./chunk-75X7PSV5.js";import"./chunk-IWQVM6J7.js";import"./chunk-JEMZEB2A.js";import"./chunk-J27M3G3A.js";import"./chunk-72JFUHJH.js";import"./chunk-NUYE3OAI.js";export{a as DIFF_BOUNDS,b as diffBranch};
