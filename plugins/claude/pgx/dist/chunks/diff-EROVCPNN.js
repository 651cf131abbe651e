import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b}from"./chunk-MBGVJ2HA.js";import"./chunk-MRYHCXLA.js";import"./chunk-X5WOE333.js";import"./chunk-AUKNPLHM.js";import"./chunk-L6OGEMEH.js";import"./chunk-3FROZ4LZ.js";import"./chunk-IWVN2AVA.js";import"./chunk-NUYE3OAI.js";export{a as DIFF_BOUNDS,b as diffBranch};
