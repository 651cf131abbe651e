import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b,c,d}from"./chunk-RSPW7GZ6.js";import"./chunk-JEMZEB2A.js";import"./chunk-TJJBJRXK.js";import"./chunk-NUYE3OAI.js";export{a as refusalOf,b as scanAndMask,d as scanOnly,c as scanOrigin};
