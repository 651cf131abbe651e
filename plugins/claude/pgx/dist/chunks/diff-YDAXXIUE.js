import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b}from"./chunk-KEW63PHW.js";import"./chunk-BFTK3WFX.js";import"./chunk-JEMZEB2A.js";import"./chunk-EXLS45GI.js";import"./chunk-CCLYC7BM.js";import"./chunk-NUYE3OAI.js";export{a as DIFF_BOUNDS,b as diffBranch};
