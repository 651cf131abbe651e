import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b}from"./chunk-NUW23NQ5.js";import"./chunk-7NVVZLU2.js";import"./chunk-MO3IS33I.js";import"./chunk-Y5ES7OPW.js";import"./chunk-L6OGEMEH.js";import"./chunk-DMU5IBPI.js";import"./chunk-IWVN2AVA.js";import"./chunk-NUYE3OAI.js";export{a as DIFF_BOUNDS,b as diffBranch};
