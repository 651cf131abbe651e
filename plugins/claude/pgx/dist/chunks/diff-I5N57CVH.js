import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b}from"./chunk-DLPUOTSG.js";import"./chunk-2PVLMTEJ.js";import"./chunk-EGCKLCAL.js";import"./chunk-YTPSDT5I.js";import"./chunk-L6OGEMEH.js";import"./chunk-GWOBALT6.js";import"./chunk-AQUPQN7V.js";import"./chunk-NUYE3OAI.js";export{a as DIFF_BOUNDS,b as diffBranch};
