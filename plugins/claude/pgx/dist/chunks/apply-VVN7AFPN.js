import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b,c,d}from"./chunk-LWXR3ALR.js";import"./chunk-JEMZEB2A.js";import"./chunk-PAPU6KH5.js";import"./chunk-VH6HZZNA.js";export{a as refusalOf,b as scanAndMask,d as scanOnly,c as scanOrigin};
