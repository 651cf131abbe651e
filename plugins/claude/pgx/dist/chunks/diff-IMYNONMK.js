import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b}from"./chunk-BOWBCR75.js";import"./chunk-LJHOFANZ.js";import"./chunk-L6OGEMEH.js";import"./chunk-XETIFWHM.js";import"./chunk-K5Z3VTCC.js";import"./chunk-NUYE3OAI.js";export{a as DIFF_BOUNDS,b as diffBranch};
