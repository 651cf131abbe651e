import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b}from"./chunk-UD554QRS.js";import"./chunk-U4LERFCG.js";import"./chunk-E2JRBLLD.js";import"./chunk-F27XFYYY.js";import"./chunk-K5Z3VTCC.js";import"./chunk-NUYE3OAI.js";export{a as DIFF_BOUNDS,b as diffBranch};
