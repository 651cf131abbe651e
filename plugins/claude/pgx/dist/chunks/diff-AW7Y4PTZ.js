import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b}from"./chunk-YBU65JLN.js";import"./chunk-DL3AU74C.js";import"./chunk-E2JRBLLD.js";import"./chunk-5SVS4DSN.js";import"./chunk-OKGCZMRR.js";import"./chunk-NUYE3OAI.js";export{a as DIFF_BOUNDS,b as diffBranch};
