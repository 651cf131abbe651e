import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b}from"./chunk-VMCQDXJD.js";import"./chunk-VQYPX65A.js";import"./chunk-JEMZEB2A.js";import"./chunk-Y6ME3FWS.js";import"./chunk-PAPU6KH5.js";import"./chunk-VH6HZZNA.js";export{a as DIFF_BOUNDS,b as diffBranch};
