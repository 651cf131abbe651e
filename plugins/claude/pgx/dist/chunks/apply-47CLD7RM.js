import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b,c,d}from"./chunk-RTOYNAFD.js";import"./chunk-JEMZEB2A.js";import"./chunk-DVS2EO2O.js";import"./chunk-VH6HZZNA.js";export{a as refusalOf,b as scanAndMask,d as scanOnly,c as scanOrigin};
