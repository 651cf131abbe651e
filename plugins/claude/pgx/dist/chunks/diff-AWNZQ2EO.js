import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b}from"./chunk-76FD7JLT.js";import"./chunk-ICO2JI6X.js";import"./chunk-HJL6TW6V.js";import"./chunk-U7D76FWX.js";import"./chunk-L6OGEMEH.js";import"./chunk-D6DYT4XD.js";import"./chunk-2TC776FZ.js";import"./chunk-NUYE3OAI.js";export{a as DIFF_BOUNDS,b as diffBranch};
