import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b}from"./chunk-I4ZCYY6T.js";import"./chunk-F57D5KYV.js";import"./chunk-VSNPAJ77.js";import"./chunk-E2JRBLLD.js";import"./chunk-LMSF2CUM.js";import"./chunk-TOUJJTSK.js";import"./chunk-NUYE3OAI.js";export{a as DIFF_BOUNDS,b as diffBranch};
