import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b}from"./chunk-IOIWANX2.js";import"./chunk-G3FSBDEY.js";import"./chunk-JEMZEB2A.js";import"./chunk-QRCRHAU7.js";import"./chunk-DVS2EO2O.js";import"./chunk-VH6HZZNA.js";export{a as DIFF_BOUNDS,b as diffBranch};
