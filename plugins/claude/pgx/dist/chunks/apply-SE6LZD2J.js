import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
<<<<<<<< HEAD:plugins/claude/pgx/dist/chunks/apply-SE6LZD2J.js
import{a,b,c,d}from"./chunk-FUW2ETED.js";import"./chunk-JEMZEB2A.js";import"./chunk-72JFUHJH.js";import"./chunk-NUYE3OAI.js";export{a as refusalOf,b as scanAndMask,d as scanOnly,c as scanOrigin};
========
import{a,b,c,d}from"./chunk-RTOYNAFD.js";import"./chunk-JEMZEB2A.js";import"./chunk-DVS2EO2O.js";import"./chunk-VH6HZZNA.js";export{a as refusalOf,b as scanAndMask,d as scanOnly,c as scanOrigin};
>>>>>>>> house-server:plugins/claude/pgx/dist/chunks/apply-47CLD7RM.js
