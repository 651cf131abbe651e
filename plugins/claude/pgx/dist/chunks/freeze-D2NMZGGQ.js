import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
<<<<<<<< HEAD:plugins/claude/pgx/dist/chunks/freeze-D2NMZGGQ.js
import{e as a,f as b,g as c,h as d,i as e,j as f,k as g,l as h,m as i}from"./chunk-XWVQKTG7.js";import"./chunk-J27M3G3A.js";import"./chunk-72JFUHJH.js";import"./chunk-NUYE3OAI.js";export{a as FrozenCopyWaitError,b as activitySignature,d as forkViaFrozenCopy,i as freezeBranch,e as freezeFor,f as freezeSessionState,h as frozenCopySummaries,g as gcFrozen,c as unchangedAcross};
========
import{e as a,f as b,g as c,h as d,i as e,j as f,k as g,l as h,m as i}from"./chunk-WMXGOW4Z.js";import"./chunk-QRCRHAU7.js";import"./chunk-DVS2EO2O.js";import"./chunk-VH6HZZNA.js";export{a as FrozenCopyWaitError,b as activitySignature,d as forkViaFrozenCopy,i as freezeBranch,e as freezeFor,f as freezeSessionState,h as frozenCopySummaries,g as gcFrozen,c as unchangedAcross};
>>>>>>>> house-server:plugins/claude/pgx/dist/chunks/freeze-EUSHJZ7M.js
