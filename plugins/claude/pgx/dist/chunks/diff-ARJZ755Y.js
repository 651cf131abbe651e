import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b}from"./chunk-MDJNVWV5.js";import"./chunk-KM3LZEWD.js";import"./chunk-E2JRBLLD.js";import"./chunk-C4UVTJJ7.js";import"./chunk-RZTNW2FI.js";import"./chunk-NUYE3OAI.js";export{a as DIFF_BOUNDS,b as diffBranch};
