import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b}from"./chunk-XO6IPXVM.js";import"./chunk-QRO6TVYR.js";import"./chunk-JEMZEB2A.js";import"./chunk-C4NX7BDS.js";import"./chunk-6XCXIHVW.js";import"./chunk-NUYE3OAI.js";export{a as DIFF_BOUNDS,b as diffBranch};
