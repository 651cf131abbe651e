import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b}from"./chunk-HRLCKVTZ.js";import"./chunk-TMOJFQCA.js";import"./chunk-GSW2LQWP.js";import"./chunk-U7D76FWX.js";import"./chunk-E2JRBLLD.js";import"./chunk-D6DYT4XD.js";import"./chunk-2TC776FZ.js";import"./chunk-NUYE3OAI.js";export{a as DIFF_BOUNDS,b as diffBranch};
