import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b}from"./chunk-EM52TQIP.js";import"./chunk-C276IKX2.js";import"./chunk-JEMZEB2A.js";import"./chunk-UCTCLUCQ.js";import"./chunk-TJJBJRXK.js";import"./chunk-NUYE3OAI.js";export{a as DIFF_BOUNDS,b as diffBranch};
