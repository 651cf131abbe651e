import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b,c,d}from"./chunk-SSAQMTCV.js";import"./chunk-E2JRBLLD.js";import"./chunk-OKGCZMRR.js";import"./chunk-NUYE3OAI.js";export{a as refusalOf,b as scanAndMask,d as scanOnly,c as scanOrigin};
