import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b}from"./chunk-AE7PSOCG.js";import"./chunk-YILG4G2Y.js";import"./chunk-HSBDEXTR.js";import"./chunk-LEUWVOV7.js";import"./chunk-L6OGEMEH.js";import"./chunk-6AWHWJSG.js";import"./chunk-4DUHN5DM.js";import"./chunk-NUYE3OAI.js";export{a as DIFF_BOUNDS,b as diffBranch};
