import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b}from"./chunk-DJU3FZGT.js";import"./chunk-2BSAYNKR.js";import"./chunk-E2JRBLLD.js";import"./chunk-H7OZGSP3.js";import"./chunk-WV2U26FC.js";import"./chunk-VCNXHISA.js";import"./chunk-NUYE3OAI.js";export{a as DIFF_BOUNDS,b as diffBranch};
