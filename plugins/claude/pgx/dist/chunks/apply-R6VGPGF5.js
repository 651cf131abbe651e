import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b,c,d}from"./chunk-AQK6OTTA.js";import"./chunk-JEMZEB2A.js";import"./chunk-6XCXIHVW.js";import"./chunk-NUYE3OAI.js";export{a as refusalOf,b as scanAndMask,d as scanOnly,c as scanOrigin};
