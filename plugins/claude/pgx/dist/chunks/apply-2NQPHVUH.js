import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b,c,d}from"./chunk-5S2O4T4T.js";import"./chunk-L6OGEMEH.js";import"./chunk-IWVN2AVA.js";import"./chunk-NUYE3OAI.js";export{a as refusalOf,b as scanAndMask,d as scanOnly,c as scanOrigin};
