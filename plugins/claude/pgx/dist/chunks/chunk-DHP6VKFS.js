import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{e as u,f as a,g as l,h as c}from"./chunk-OKGCZMRR.js";function h(t){let s=!!t.json;return{json:s,result(e,r){let o=s?JSON.stringify(e):r();o&&process.stdout.write(o.endsWith(`
`)?o:o+`
`)},progress(e){process.stderr.write(`pgx: ${e}
`)}}}function p(t=process.stdout){return!!t.isTTY&&process.env.NO_COLOR===void 0&&process.env.TERM!=="dumb"}var g={red:31,green:32,yellow:33,dim:2,bold:1,cyan:36};function f(t,s,e=process.stdout){return p(e)?`\x1B[${g[s]}m${t}\x1B[0m`:t}var d=t=>t.replace(/\u001b\[[0-9;]*m/g,"").length;function x(t,s){let e=[t,...s.map(o=>o.map(n=>n==null||n===""?"-":n))],r=t.map((o,n)=>Math.max(...e.map(i=>d(i[n]??""))));return e.map(o=>o.map((n,i)=>i===o.length-1?n:n+" ".repeat(r[i]-d(n??""))).join("  ").trimEnd()).join(`
`)}function w(t,s=Date.now()){let e=new Date(t),r=n=>String(n).padStart(2,"0");return`${`${e.getFullYear()}-${r(e.getMonth()+1)}-${r(e.getDate())}`} ${r(e.getHours())}:${r(e.getMinutes())}:${r(e.getSeconds())} (${m(e,s)})`}function m(t,s=Date.now()){let e=new Date(t).getTime()-s,r=Math.abs(e);if(r<1e3)return"now";let o=Math.floor(r/1e3),n=[Math.floor(o/86400)&&`${Math.floor(o/86400)}d`,Math.floor(o%86400/3600)&&`${Math.floor(o%86400/3600)}h`,Math.floor(o%3600/60)&&`${Math.floor(o%3600/60)}m`,o<3600&&o%60&&`${o%60}s`].filter(Boolean).slice(0,2).join(" ");return e>0?`in ${n}`:`${n} ago`}function b(t,s={}){let e=c(t),r=(n,i)=>s.color?f(n,i,process.stderr):n,o=`${r("error","red")}: ${e.message}
`;return e.hint&&(o+=`${r("hint","yellow")}: ${e.hint}
`),s.stack&&!u(t)&&t instanceof Error&&t.stack&&(o+=l(t.stack)+`
`),{text:o,exitCode:a(t)}}function M(t,s,e=process.stdout){if(s)return e.write(JSON.stringify({error:c(t)})+`
`),a(t);let r=b(t,{color:!0,stack:!!process.env.DEBUG?.includes("pgx")});return process.stderr.write(r.text),r.exitCode}export{h as a,f as b,x as c,w as d,m as e,b as f,M as g};
