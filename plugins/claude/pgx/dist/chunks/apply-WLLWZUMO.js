import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b,c,d}from"./chunk-54RXZ7T4.js";import"./chunk-E2JRBLLD.js";import"./chunk-RZTNW2FI.js";import"./chunk-NUYE3OAI.js";export{a as refusalOf,b as scanAndMask,d as scanOnly,c as scanOrigin};
