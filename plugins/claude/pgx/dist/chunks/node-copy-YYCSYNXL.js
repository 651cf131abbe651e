import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{B as Pn,C as jn,D as Fn,a as _t,b as Ot,c as En,d as Nt,e as bn,f as Sn,g as yn,h as An,i as _n,j as On,k as Nn,l as Rn,m as wn,n as Tn,o as In,p as Ln,q as $n,r as Cn,s as kn,t as xn,u as vn,v as Dn,w as Mn,x as Bn,y as qn,z as Rt}from"./chunk-2FQLNE64.js";import{d as ve,u as mn,v as gn,w as hn}from"./chunk-VCNXHISA.js";import{a as we,b as Te,d as wo}from"./chunk-NUYE3OAI.js";var wt=Te((Ki,Kn)=>{var Wn=we("buffer").Buffer;function G(){this.offset=0,this.size=0,this.buffers=[]}Kn.exports=G;G.prototype.isEmpty=function(){return this.size===0};G.prototype.clone=function(t){let n=new G;return n.offset=this.offset,n.size=t,n.buffers=this.buffers.slice(),n};G.prototype.toChunks=function(){if(this.size===0)return[];this.offset!==0&&(this.buffers[0]=this.buffers[0].slice(this.offset),this.offset=0);let t=[],n=0,s;for(s=0;n<=this.size&&s<this.buffers.length;s++){let o=this.buffers[s];n+=o.length,n>this.size&&(o=o.slice(0,o.length-(n-this.size)),this.buffers[s]=o),t.push(o)}return s<this.buffers.length&&(this.buffers.length=s),t};G.prototype.toString=function(t){return this.toChunks().map(function(n){return n.toString(t)}).join("")};G.prototype.use=function(t,n,s){this.buffers=[t],this.offset=n,this.size=s};G.prototype.push=function(t){t.length!==0&&(this.size+=t.length,this.buffers.push(t))};G.prototype.has=function(t){return this.size>=t};G.prototype.skip=function(t){if(this.size===0)return;if(this.size-=t,this.offset+t<this.buffers[0].length){this.offset+=t;return}let n=t-(this.buffers[0].length-this.offset);this.offset=0;let s;for(s=1;n>0&&s<this.buffers.length;s++){let o=this.buffers[s];if(o.length>n){this.offset=n;break}n-=o.length}this.buffers=this.buffers.slice(s)};G.prototype.copy=function(t,n,s,o){if(this.size===0)return;if(s!==0)throw new Error("Unsupported offset in .copy()");let r=n,i=this.buffers[0],l=Math.min(o,i.length-this.offset);i.copy(t,r,this.offset,this.offset+l),r+=l;let c=o-l;for(let a=1;c>0&&a<this.buffers.length;a++){let u=this.buffers[a],d=Math.min(c,u.length);u.copy(t,r,0,d),r+=d,c-=d}};G.prototype.take=function(t){if(t===0)return Wn.alloc(0);this.size-=t;let n=this.buffers[0].length-this.offset;if(n===t){let l=this.buffers.shift();return this.offset!==0&&(l=l.slice(this.offset),this.offset=0),l}else if(n>t){let l=this.buffers[0].slice(this.offset,this.offset+t);return this.offset+=t,l}let s=Wn.alloc(t),o=0,r=this.offset,i;for(i=0;o!==t&&i<this.buffers.length;i++){let l=this.buffers[i],c=Math.min(l.length-r,t-o);if(l.copy(s,o,r,r+c),r+c<l.length){this.offset=r+c;break}else o+=c,r=0}return this.buffers=this.buffers.slice(i),this.buffers.length===0&&(this.offset=0),s};G.prototype.peekUInt8=function(){return this.buffers[0][this.offset]};G.prototype.readUInt8=function(){this.size-=1;let t=this.buffers[0],n=t[this.offset];return++this.offset===t.length&&(this.offset=0,this.buffers.shift()),n};G.prototype.readUInt16LE=function(){let t=this.buffers[0];this.size-=2;let n,s;return t.length-this.offset>=2?(n=t.readUInt16LE(this.offset),s=0,this.offset+=2):(n=t[this.offset]|this.buffers[1][0]<<8,s=1,this.offset=1),this.offset===this.buffers[s].length&&(this.offset=0,s++),s!==0&&(this.buffers=this.buffers.slice(s)),n};G.prototype.readUInt24LE=function(){let t=this.buffers[0],n,s,o=t.length-this.offset;if(o>=3)n=t.readUInt16LE(this.offset)|t[this.offset+2]<<16,s=0,this.offset+=3;else if(o>=2)n=t.readUInt16LE(this.offset)|this.buffers[1][0]<<16,s=1,this.offset=1;else return n=t[this.offset],this.offset=0,this.buffers.shift(),this.size-=1,n|=this.readUInt16LE()<<8,n;return this.size-=3,this.offset===this.buffers[s].length&&(this.offset=0,s++),s!==0&&(this.buffers=this.buffers.slice(s)),n};G.prototype.readUInt32LE=function(){let t=this.buffers[0],n,s,o=t.length-this.offset;if(o>=4)n=t.readUInt32LE(this.offset),s=0,this.offset+=4;else if(o>=3)n=(t.readUInt16LE(this.offset)|t[this.offset+2]<<16)+this.buffers[1][0]*16777216,s=1,this.offset=1;else return o>=2?(n=t.readUInt16LE(this.offset),this.offset=0,this.buffers.shift(),this.size-=2,n+=this.readUInt16LE()*65536,n):(n=t[this.offset],this.offset=0,this.buffers.shift(),this.size-=1,n+=this.readUInt24LE()*256,n);return this.size-=4,this.offset===this.buffers[s].length&&(this.offset=0,s++),s!==0&&(this.buffers=this.buffers.slice(s)),n};G.prototype.readUInt16BE=function(){let t=this.readUInt16LE();return(t&255)<<8|t>>8};G.prototype.readUInt24BE=function(){let t=this.readUInt24LE();return(t&255)<<16|(t>>8&255)<<8|t>>16};G.prototype.readUInt32BE=function(){let t=this.readUInt32LE();return((t&255)<<24|(t>>>8&255)<<16|(t>>>16&255)<<8|t>>>24)>>>0};function Yn(e){return e>=128?-(255^e)-1:e}G.prototype.peekInt8=function(){return Yn(this.peekUInt8())};G.prototype.readInt8=function(){return Yn(this.readUInt8())};function Gn(e){return e>=32768?-(65535^e)-1:e}G.prototype.readInt16BE=function(){return Gn(this.readUInt16BE())};G.prototype.readInt16LE=function(){return Gn(this.readUInt16LE())};function Jn(e){return e>=8388608?-(16777215^e)-1:e}G.prototype.readInt24BE=function(){return Jn(this.readUInt24BE())};G.prototype.readInt24LE=function(){return Jn(this.readUInt24LE())};function Vn(e){return e>=2147483648?-(4294967295^e)-1:e}G.prototype.readInt32BE=function(){return Vn(this.readUInt32BE())};G.prototype.readInt32LE=function(){return Vn(this.readUInt32LE())}});var Qe=Te((zi,zn)=>{zn.exports={ErrorResponse:69,CopyInResponse:71,CopyOutResponse:72,CopyBothResponse:87,CopyDone:99,CopyData:100,CopyFail:102,CommandComplete:67,ReadyForQuery:90,NotificationResponse:65,NoticeResponse:78,ParameterStatus:83}});var ts=Te((Xi,es)=>{"use strict";es.exports=function(e,t){return new It(e,t)};var{Readable:To}=we("stream"),Io=we("assert"),Xn=wt(),ge=Qe(),Tt=0,Qn=1,Zn=2,It=class extends To{constructor(t,n){super(n),this.text=t,this.rowCount=0,this._state=Tt,this._buffer=new Xn,this._unreadMessageContentLength=0,this._copyDataChunks=new Xn,this._pgDataHandler=null,this._drained=!1,this._forwarding=!1,this._onReadableEvent=this._onReadable.bind(this)}submit(t){this.connection=t,this._attach(),t.query(this.text)}_attach(){let t=this.connection.stream,n=t.listeners("data");Io(n.length==1),this._pgDataHandler=n.pop(),t.removeListener("data",this._pgDataHandler),t.pause(),this._forward(),t.on("readable",this._onReadableEvent)}_detach(){let t=this.connection.stream,n=this._buffer.take(this._buffer.size);t.removeListener("readable",this._onReadableEvent),t.addListener("data",this._pgDataHandler),this._pgDataHandler(n),process.nextTick(function(){t.resume()})}_cleanup(){this._buffer=null,this._copyDataChunks=null,this._pgDataHandler=null,this._onReadableEvent=null}_onReadable(){this._forward()}_read(){this._drained=!0,this._forward()}_forward(){if(this._forwarding||!this._drained||!this.connection)return;this._forwarding=!0;let t=this.connection.stream,n;for(;this._drained&&(n=t.read())!==null;)this._drained=this._parse(n);this._forwarding=!1}_parse(t){let n=!1,s=!0;for(this._buffer.push(t);!n&&this._buffer.size>0;){if(Tt===this._state){if(!this._buffer.has(1))break;if(this._code=this._buffer.peekUInt8(),this._code===ge.ErrorResponse){this._detach();return}this._buffer.readUInt8(),this._state=Qn}if(Qn===this._state){if(!this._buffer.has(4))break;this._unreadMessageContentLength=this._buffer.readUInt32BE()-4,this._state=Zn}if(Zn===this._state){if(this._unreadMessageContentLength>0&&this._buffer.size>0){let r=Math.min(this._buffer.size,this._unreadMessageContentLength),i=this._buffer.take(r);this._unreadMessageContentLength-=r,this._code===ge.CopyData&&this._copyDataChunks.push(i)}if(this._unreadMessageContentLength===0){switch(this._code){case ge.CopyOutResponse:case ge.CopyData:case ge.ParameterStatus:case ge.NoticeResponse:case ge.NotificationResponse:break;case ge.CopyDone:default:n=!0;break}this._state=Tt}}}let o=this._copyDataChunks.size;return o>0&&(s=this.push(this._copyDataChunks.take(o))),n&&(this._detach(),this.push(null),this._cleanup()),s}handleError(t){this.emit("error",t),this._cleanup()}handleCommandComplete(t){let n=/COPY (\d+)/.exec((t||{}).text);n&&(this.rowCount=parseInt(n[1],10))}handleReadyForQuery(){}}});var rs=Te((Qi,ss)=>{"use strict";ss.exports=function(e,t){return new Lt(e,t)};var{Writable:Lo}=we("stream"),ns=Qe(),Lt=class extends Lo{constructor(t,n){super(n),this.text=t,this.rowCount=0,this._gotCopyInResponse=!1,this.chunks=[],this.cb_CopyInResponse=null,this.cb_ReadyForQuery=null,this.cb_destroy=null,this.cork()}submit(t){this.connection=t,t.query(this.text)}callback(){}_write(t,n,s){if(this.chunks.push({chunk:t,encoding:n}),this._gotCopyInResponse)return this.flush(s);this.cb_CopyInResponse=s}_writev(t,n){if(this.chunks.length==0)this.chunks=t;else for(let o=0;o<t.length;o+=125e3)this.chunks.push(...t.slice(o,Math.min(o+125e3,t.length)));if(this._gotCopyInResponse)return this.flush(n);this.cb_CopyInResponse=n}_destroy(t,n){if(this.cb_ReadyForQuery)return n(t);this.cb_destroy=n;let s=t?t.message:"NODE-PG-COPY-STREAMS destroy() was called",o=this,r=function(){o.connection.sendCopyFail(s)};if(this.chunks=[],this._gotCopyInResponse)return this.flush(r);this.cb_CopyInResponse=r}_final(t){this.cb_ReadyForQuery=t;let n=this,s=function(){let r=Buffer.from([ns.CopyDone,0,0,0,4]);n.connection.stream.write(r)};if(this._gotCopyInResponse)return this.flush(s);this.cb_CopyInResponse=s}flush(t){let n,s=!0;for(;s&&(n=this.chunks.shift());)s=this.flushChunk(n.chunk);t&&(s?t():this.chunks.length?this.connection.stream.once("drain",this.flush.bind(this,t)):this.connection.stream.once("drain",t))}flushChunk(t){let s=Buffer.from([ns.CopyData,0,0,0,0]);return s.writeUInt32BE(t.length+4,1),this.connection.stream.write(s),this.connection.stream.write(t)}handleError(t){if(this.callback(),this.cb_destroy){let n=this.cb_destroy;this.cb_destroy=null,n(t)}else this.emit("error",t);this.connection=null}handleCopyInResponse(t){this._gotCopyInResponse=!0,this.destroyed||this.uncork();let n=this.cb_CopyInResponse||function(){};this.cb_CopyInResponse=null,this.flush(n)}handleCommandComplete(t){let n=/COPY (\d+)/.exec((t||{}).text);n&&(this.rowCount=parseInt(n[1],10))}handleReadyForQuery(){this.callback(),this.cb_ReadyForQuery(),this.connection=null}}});var ls=Te((Zi,cs)=>{"use strict";cs.exports=function(e,t){return new Ct(e,t)};var{Duplex:$o}=we("stream"),Co=we("assert"),os=wt(),le=Qe(),$t=0,is=1,as=2,Ct=class extends $o{constructor(t,n){super(n),this.text=t,this._state=$t,this._buffer=new os,this._unreadMessageContentLength=0,this._copyDataChunks=new os,this._pgDataHandler=null,this._drained=!1,this._forwarding=!1,this._onReadableEvent=this._onReadable.bind(this),this.alignOnCopyDataFrame=n?n.alignOnCopyDataFrame===!0:!1,this._gotCopyInResponse=!1,this.chunks=[],this.cb=null,this.cork()}submit(t){this.connection=t,this._attach(),t.query(this.text)}_attach(){let t=this.connection.stream,n=t.listeners("data");Co(n.length==1),this._pgDataHandler=n.pop(),t.removeListener("data",this._pgDataHandler),t.pause(),this._forward(),t.on("readable",this._onReadableEvent)}_detach(){let t=this.connection.stream,n=this._buffer.take(this._buffer.size);t.removeListener("readable",this._onReadableEvent),t.addListener("data",this._pgDataHandler),this._pgDataHandler(n),process.nextTick(function(){t.resume()})}_cleanup(){this._buffer=null,this._copyDataChunks=null,this._pgDataHandler=null,this._onReadableEvent=null}_onReadable(){this._forward()}_read(){this._drained=!0,this._forward()}_forward(){if(this._forwarding||!this._drained||!this.connection)return;this._forwarding=!0;let t=this.connection.stream,n;for(;this._drained&&(n=t.read())!==null;)this._drained=this._parse(n);this._forwarding=!1}_parse(t){let n=!1,s=!0;for(this._buffer.push(t);!n&&this._buffer.size>0;){if($t===this._state){if(!this._buffer.has(1))break;if(this._code=this._buffer.peekUInt8(),this._code===le.ErrorResponse){this._detach();return}this._buffer.readUInt8(),this._state=is}if(is===this._state){if(!this._buffer.has(4))break;this._unreadMessageContentLength=this._buffer.readUInt32BE()-4,this._state=as}if(as===this._state){if(this._unreadMessageContentLength>0&&this._buffer.size>0){let o=Math.min(this._buffer.size,this._unreadMessageContentLength),r=this._buffer.take(o);this._unreadMessageContentLength-=o,this._code===le.CopyData&&this._copyDataChunks.push(r)}if(this._unreadMessageContentLength===0){switch(this._code){case le.CopyBothResponse:this._startCopyIn();break;case le.CopyData:this.alignOnCopyDataFrame&&(s=this._flushCopyData());break;case le.ParameterStatus:case le.NoticeResponse:case le.NotificationResponse:break;case le.CopyDone:default:n=!0;break}this._state=$t}}}return this.alignOnCopyDataFrame||(s=this._flushCopyData()),n&&(this._detach(),this.push(null),this._cleanup()),s}_flushCopyData(){let t=!0,n=this._copyDataChunks.size;return n>0&&(t=this.push(this._copyDataChunks.take(n))),t}_write(t,n,s){if(this.chunks.push({chunk:t,encoding:n}),this._gotCopyInResponse)return this.flush(s);this.cb=s}_writev(t,n){if(this.chunks.push(...t),this._gotCopyInResponse)return this.flush(n);this.cb=n}_final(t){this.flush();let s=Buffer.from([le.CopyDone,0,0,0,4]);this.connection.stream.write(s),this.cb_flush=t}flush(t){let n,s=!0;for(;s&&(n=this.chunks.shift());)s=this.flushChunk(n.chunk);t&&(s?t():this.chunks.length?this.connection.stream.once("drain",this.flush.bind(this,t)):this.connection.stream.once("drain",t))}flushChunk(t){let s=Buffer.from([le.CopyData,0,0,0,0]);return s.writeUInt32BE(t.length+4,1),this.connection.stream.write(s),this.connection.stream.write(t)}_startCopyIn(){if(this._gotCopyInResponse=!0,this.uncork(),this.flush(),this.cb){let{cb:t}=this;this.cb=null,t()}}handleError(t){this.emit("error",t),this._cleanup()}handleCopyData(t){}handleCommandComplete(){}handleReadyForQuery(){this.connection=null,this.cb_flush()}}});var ds=Te(Ze=>{"use strict";var ko=ts(),xo=rs(),vo=ls();Ze.to=function(t,n){return new ko(t,n)};Ze.from=function(t,n){return new xo(t,n)};Ze.both=function(t,n){return new vo(t,n)}});import{availableParallelism as Ui}from"node:os";async function Hn(e,t,n){let s=d=>n.keepOwners&&d!==n.self&&n.present.has(d),o=await Pn(e),r=await jn(t,o.map(d=>d.qname));for(let d of o)r.has(d.qname)||(await t.query(d.def),await t.query(Fn(d.parent,d.qname)));let i=await Mn(e);for(let d of i)await t.query(d.def),s(d.owner)&&await t.query(`ALTER STATISTICS ${d.qname} OWNER TO ${gn(d.owner)}`),d.comment!==null&&await t.query(`COMMENT ON STATISTICS ${d.qname} IS ${hn(d.comment)}`);for(let d of await Dn(e))await t.query(d);let l=new Map((await xn(e)).map(d=>[`${d.schema}.${d.name}`,d.populated]));for(let d of n.matviews)await t.query(vn(d,l.get(`${d.schema}.${d.name}`)??!0));let c=await Rn(e,await Nn(e));await wn(t,c);let a=0,u=await Tn(e);for(let d of u){await $n(t,d.oid);for(let E=0;E<Number(d.bytes);E+=In){let O=await Ln(e,d.oid,E);await Cn(t,d.oid,E,O),a+=O.length}let f=d.acl?.filter(E=>E.grantee===""||n.present.has(E.grantee))??null,m={...d,acl:f,owner:s(d.owner)?d.owner:n.self};for(let E of kn(m,n.self,n.keepOwners))await t.query(E)}return{sequences:c.length,large_objects:u.length,large_object_bytes:a,matviews:n.matviews.length,statistics:i.length}}var et=wo(ds(),1);import{pipeline as Do}from"node:stream/promises";import{Transform as Mo}from"node:stream";async function us(e,t,n){let s=[...e],o={tables:0,rows:0,bytes:0},r,i=async({reader:l,writer:c})=>{for(let a=s.shift();a&&r===void 0;a=s.shift())try{let u=await Bo(a,l,c,n.binary&&a.binary,n.gate,d=>o.bytes+=d);o.rows+=u,o.tables++,n.progress?.(o,e.length)}catch(u){r??=u}};if(await Promise.all(t.map(i)),r!==void 0)throw r;return o}async function Bo(e,t,n,s,o,r){let i=yn(e,s),l=An(e,s);await n.db.query("BEGIN"),await n.db.query(_n(e)),await o?.before(l,n.db),await o?.before(i,t.db);let c=n.client.query((0,et.from)(l)),a=new Mo({transform(u,d,f){r(u.length),f(null,u)}});try{await Do(t.client.query((0,et.to)(i)),a,c)}catch(u){throw await n.db.query("ROLLBACK").catch(()=>{}),u}return await n.db.query("COMMIT"),c.rowCount}import{createHash as qo}from"node:crypto";function ye(e){if(e===null)return"null";switch(typeof e){case"string":return JSON.stringify(e);case"boolean":return e?"true":"false";case"bigint":return`${e}n`;case"number":if(!Number.isFinite(e))throw new Error(`canonicalize: non-finite number ${e}`);return JSON.stringify(e===0?0:e);case"undefined":throw new Error("canonicalize: undefined is only allowed as an (omitted) object value");case"object":return Array.isArray(e)?`[${e.map(n=>{if(n===void 0)throw new Error("canonicalize: arrays must not contain undefined");return ye(n)}).join(",")}]`:`{${Object.keys(e).filter(n=>e[n]!==void 0&&!n.startsWith("_")).sort().map(n=>`${JSON.stringify(n)}:${ye(e[n])}`).join(",")}}`;default:throw new Error(`canonicalize: unsupported type ${typeof e}`)}}var ps=new WeakMap,kt=new Map,fs=1<<24,xt=0;function vt(e){let t=kt.get(e);if(t!==void 0)return t;let n=qo("sha256").update(e).digest("hex");return e.length>fs||(xt>=fs&&(kt.clear(),xt=0),kt.set(e,n),xt+=e.length),n}function tt(e){if(e===null||typeof e!="object")return vt(ye(e));let t=ps.get(e);if(t!==void 0)return t;let n=vt(ye(e));return ps.set(e,n),n}function nt(e){return vt(e)}var ms=["schema","role","extension","language","eventTrigger","publication","subscription","fdw","server"],gs=["table","view","materializedView","foreignTable","sequence","index","collation","domain","type"],hs=["column","constraint","trigger","rule","policy","default"],Ie=["function","procedure","aggregate"],Es=["column","constraint","default","index","materializedView"],bs=[["domain","constraint"]];function Ss(e){return"target"in e}var ia=[...ms,...gs,...hs,...Ie,"membership","userMapping","typeAttribute","publicationRel","publicationSchema","comment","acl","securityLabel","defaultPrivilege","extensionIntent"];var ys=new Set(ms),As=new Set(gs),_s=new Set(hs),Os=new Set(Ie),Po=/[.:(),"\s]/;function W(e){return e===""||Po.test(e)?`"${e.replaceAll('"','""')}"`:e}function p(e){let t=e.kind;switch(t){case"membership":return`membership:${W(e.role)}.${W(e.member)}`;case"userMapping":return`userMapping:${W(e.server)}.${W(e.role)}`;case"typeAttribute":return`typeAttribute:${W(e.schema)}.${W(e.type)}.${W(e.name)}`;case"publicationRel":return`publicationRel:${W(e.publication)}.${W(e.schema)}.${W(e.table)}`;case"publicationSchema":return`publicationSchema:${W(e.publication)}.${W(e.schema)}`;case"comment":return`comment:(${p(e.target)})`;case"acl":return`acl:(${p(e.target)}).${W(e.grantee)}${e.column!==void 0?`.${W(e.column)}`:""}`;case"securityLabel":return`securityLabel:(${p(e.target)}).${W(e.provider)}`;case"defaultPrivilege":return`defaultPrivilege:${W(e.role)}.${W(e.schema??"")}.${W(e.objtype)}.${W(e.grantee)}`;case"extensionIntent":return`extensionIntent:${W(e.ext)}.${W(e.intentKind)}.${W(e.key)}`;default:if(ys.has(t))return`${t}:${W(e.name)}`;if(As.has(t)){let n=e;return`${t}:${W(n.schema)}.${W(n.name)}`}if(_s.has(t)){let n=e;return`${t}:${W(n.schema)}.${W(n.table)}.${W(n.name)}`}if(Os.has(t)){let n=e;return`${t}:${W(n.schema)}.${W(n.name)}(${n.args.map(W).join(",")})`}throw new Error(`encodeId: unknown kind ${String(t)}`)}}var Dt=class{input;pos=0;constructor(t){this.input=t}peek(){return this.input[this.pos]}expect(t){if(this.input[this.pos]!==t)throw new Error(`parseId: expected '${t}' at position ${this.pos} in '${this.input}'`);this.pos++}readSegment(){if(this.peek()==='"')return this.readQuotedSegment();let t=this.pos;for(;this.pos<this.input.length&&!/[.:(),)]/.test(this.input[this.pos]);)this.pos++;if(this.pos===t)throw new Error(`parseId: empty segment at position ${this.pos} in '${this.input}'`);return this.input.slice(t,this.pos)}readQuotedSegment(){this.pos++;let t="";for(;;){let n=this.input[this.pos];if(n===void 0)throw new Error(`parseId: unterminated quote in '${this.input}'`);if(n==='"')if(this.input[this.pos+1]==='"')t+='"',this.pos+=2;else return this.pos++,t;else t+=n,this.pos++}}atEnd(){return this.pos>=this.input.length}};function st(e){let t=e.pos;for(;e.pos<e.input.length&&/[a-zA-Z]/.test(e.input[e.pos]);)e.pos++;let n=e.input.slice(t,e.pos);if(e.expect(":"),ys.has(n))return{kind:n,name:e.readSegment()};if(As.has(n)){let s=e.readSegment();e.expect(".");let o=e.readSegment();return{kind:n,schema:s,name:o}}if(_s.has(n)){let s=e.readSegment();e.expect(".");let o=e.readSegment();e.expect(".");let r=e.readSegment();return{kind:n,schema:s,table:o,name:r}}if(Os.has(n)){let s=e.readSegment();e.expect(".");let o=e.readSegment();e.expect("(");let r=[];if(e.peek()!==")")for(;;){if(r.push(e.readSegment()),e.peek()===","){e.pos++;continue}break}return e.expect(")"),{kind:n,schema:s,name:o,args:r}}switch(n){case"membership":{let s=e.readSegment();e.expect(".");let o=e.readSegment();return{kind:n,role:s,member:o}}case"userMapping":{let s=e.readSegment();e.expect(".");let o=e.readSegment();return{kind:n,server:s,role:o}}case"typeAttribute":{let s=e.readSegment();e.expect(".");let o=e.readSegment();e.expect(".");let r=e.readSegment();return{kind:n,schema:s,type:o,name:r}}case"publicationRel":{let s=e.readSegment();e.expect(".");let o=e.readSegment();e.expect(".");let r=e.readSegment();return{kind:n,publication:s,schema:o,table:r}}case"publicationSchema":{let s=e.readSegment();e.expect(".");let o=e.readSegment();return{kind:n,publication:s,schema:o}}case"comment":{e.expect("(");let s=st(e);return e.expect(")"),{kind:n,target:s}}case"acl":{e.expect("(");let s=st(e);e.expect(")"),e.expect(".");let o=e.readSegment();return e.peek()==="."?(e.pos++,{kind:n,target:s,grantee:o,column:e.readSegment()}):{kind:n,target:s,grantee:o}}case"securityLabel":{e.expect("(");let s=st(e);e.expect(")"),e.expect(".");let o=e.readSegment();return{kind:n,target:s,provider:o}}case"defaultPrivilege":{let s=e.readSegment();e.expect(".");let o=e.readSegment();e.expect(".");let r=e.readSegment();e.expect(".");let i=e.readSegment();return{kind:n,role:s,schema:o===""?null:o,objtype:r,grantee:i}}case"extensionIntent":{let s=e.readSegment();e.expect(".");let o=e.readSegment();e.expect(".");let r=e.readSegment();return{kind:n,ext:s,intentKind:o,key:r}}default:throw new Error(`parseId: unknown kind '${n}' in '${e.input}'`)}}function rt(e){let t=new Dt(e),n=st(t);if(!t.atEnd())throw new Error(`parseId: trailing input at position ${t.pos} in '${e}'`);return n}var ee=e=>e.kind==="owner"&&e.to.kind==="role",ot=class{diagnostics=[];source;referenceOnly;#e=new Map;#t=new Map;#s=new Map;#n=new Map;#r=new Map;#o=[];#a=new Map;#c=new Map;#i;constructor(t,n,s="liveDb",o=new Set,r={}){this.source=s,this.referenceOnly=o;for(let a of t){let u=p(a.id);if(this.#e.has(u))throw new Error(`FactBase: duplicate fact id ${u}`);this.#e.set(u,{fact:a,encoded:u,parentKey:a.parent===void 0?void 0:p(a.parent),hash:tt(a.payload)})}for(let a of this.#e.values()){let u=a.parentKey;if(u===void 0)continue;if(!this.#e.has(u))throw new Error(`FactBase: fact ${a.encoded} references missing parent ${u}`);let d=this.#t.get(u)??[];d.push(a),this.#t.set(u,d)}for(let a of this.#t.values())a.sort((u,d)=>u.encoded<d.encoded?-1:1);let i=new Set,l=[],c=new Set;for(let a of this.#e.values()){if(i.has(a.encoded))continue;l.length=0,c.clear();let u=a;for(;u!==void 0&&!i.has(u.encoded);){if(c.has(u.encoded)){let d=l.indexOf(u.encoded),f=[...l.slice(d),u.encoded];throw new Error(`FactBase: parent cycle (no root) among facts ${f.join(" -> ")}`)}if(c.add(u.encoded),l.push(u.encoded),u.parentKey===void 0)break;u=this.#e.get(u.parentKey)}for(let d of l)i.add(d)}for(let a of n){let u=p(a.from),d=p(a.to),f=this.#e.has(u),m=this.#e.has(d);if(!f||!m){if(r.allowDangling?.(a)){if(this.#o.push(a),f&&this.#l(u,d,a),m){let O=this.#n.get(d)??[];O.push(a),this.#n.set(d,O)}continue}this.diagnostics.push({code:"dangling_edge",severity:"warning",subject:f?a.to:a.from,message:`edge ${u} -[${a.kind}]-> ${d} references a fact not in the base`});continue}this.#o.push(a),this.#l(u,d,a);let E=this.#n.get(d)??[];E.push(a),this.#n.set(d,E)}}#l(t,n,s){let o=this.#s.get(t)??[];o.push(s),this.#s.set(t,o);let r=this.#r.get(t)??[];r.push(`${t}-[${s.kind}]->${n}`),this.#r.set(t,r)}get edges(){return this.#o}getByEncoded(t){return this.#e.get(t)?.fact}facts(){return[...this.#e.values()].map(t=>t.fact)}get(t){return this.#e.get(p(t))?.fact}has(t){return this.#e.has(p(t))}isReferenceOnly(t){return this.referenceOnly.has(p(t))}hashOf(t){let n=this.#e.get(p(t));if(!n)throw new Error(`FactBase: unknown fact ${p(t)}`);return n.hash}childrenOf(t){return(this.#t.get(p(t))??[]).map(n=>n.fact)}outgoingEdges(t){return this.#s.get(p(t))??[]}incomingEdges(t){return this.#n.get(p(t))??[]}incomingEdgesByEncoded(t){return this.#n.get(t)??[]}roots(){return[...this.#e.values()].filter(t=>t.fact.parent===void 0).sort((t,n)=>t.encoded<n.encoded?-1:1).map(t=>t.fact)}rollupOf(t){return this.#d(p(t))}#d(t){let n=this.#a.get(t);if(n!==void 0)return n;let s=this.#e.get(t);if(!s)throw new Error(`FactBase: unknown fact ${t}`);let o=(this.#t.get(t)??[]).map(l=>`${l.encoded}=${this.#d(l.encoded)}`),r=(this.#r.get(t)??[]).sort(),i=nt(`F|${s.hash}|C|${o.join(",")}|E|${r.join(",")}`);return this.#a.set(t,i),i}structuralRollupOf(t){return this.#u(p(t))}#u(t){let n=this.#c.get(t);if(n!==void 0)return n;let s=this.#e.get(t);if(!s)throw new Error(`FactBase: unknown fact ${t}`);let o=(this.#t.get(t)??[]).map(i=>this.#u(i.encoded)).sort(),r=nt(`S|${s.hash}|C|${o.join(",")}`);return this.#c.set(t,r),r}get rootHash(){if(this.#i===void 0){let t=this.roots().map(n=>`${p(n.id)}=${this.rollupOf(n.id)}`);this.#i=nt(`ROOT|${t.join(",")}`)}return this.#i}};function Q(e,t,n="liveDb",s=new Set,o={}){return new ot(e,t,n,s,o)}var jo="57014";function Fo(e){return e.startsWith("pg_")}function Uo(e){let t=e.replace(/\s+/g," ").trim(),n=/\bFROM\s+(?:pg_catalog\.)?(\w+)/i.exec(t),s=t.slice(0,60);return n?`${n[1]} (${s}…)`:s}var it=class extends Error{code="extraction_timeout";queryLabel;timeoutMs;diagnostic;constructor(t,n){super(`extraction query ${t} exceeded the ${n}ms statement_timeout budget`),this.name="ExtractionTimeoutError",this.queryLabel=t,this.timeoutMs=n,this.diagnostic={code:this.code,severity:"error",message:this.message,context:{queryLabel:t,timeoutMs:n}}}};function Ns(e){let t=new Set(e.map(o=>p(o.id))),n=[],s=[];for(let o of e){if("target"in o.id){let r=p(o.id.target);if(!t.has(r)){s.push({code:"orphaned_satellite",severity:"info",subject:o.id,message:`dropped ${o.id.kind} whose target ${r} was not extracted (filtered)`});continue}}n.push(o)}return{facts:n,diagnostics:s}}var De="('pg_catalog', 'information_schema')",Y=`
  n.nspname NOT IN ${De}
  AND n.nspname NOT LIKE 'pg\\_toast%'
  AND n.nspname NOT LIKE 'pg\\_temp%'`;function J(e,t){return`NOT EXISTS (
    SELECT 1 FROM pg_depend ext_d
    WHERE ext_d.classid = '${e}'::regclass
      AND ext_d.objid = ${t}
      AND ext_d.deptype = 'e')`}var Z=(e,t)=>`(
    SELECT ext.extname
    FROM pg_depend ext_d
    JOIN pg_extension ext ON ext.oid = ext_d.refobjid
    WHERE ext_d.classid = '${e}'::regclass
      AND ext_d.objid = ${t}
      AND ext_d.refclassid = 'pg_extension'::regclass
      AND ext_d.deptype = 'e'
      AND ext.extname <> 'plpgsql'
    LIMIT 1)`,Ae=(e,t,n)=>`
    (SELECT json_agg(json_build_object(
        'grantee', acl.grantee_name,
        'privileges', acl.privileges,
        'grantable', acl.grantable,
        -- The owner's create-time default privilege set for this object kind
        -- (carried ONLY on the owner's row). Lets the planner's default-ACL
        -- elision tell "owner kept the full default" (elidable) apart from
        -- "owner revoked one of their defaults" (must keep the REVOKE/GRANT),
        -- without hardcoding the version-dependent set (PG17 added MAINTAIN).
        'ownerDefault', CASE
          WHEN acl.grantee_name = (
            SELECT rolname FROM pg_roles WHERE oid = ${n})
          THEN (SELECT array_agg(d.privilege_type ORDER BY d.privilege_type)
                FROM aclexplode(acldefault('${t}', ${n})) d
                WHERE d.grantee = ${n})
          ELSE NULL END) ORDER BY acl.grantee_name)
     FROM (
       SELECT COALESCE(g.rolname, 'PUBLIC') AS grantee_name,
              -- DISTINCT: aclexplode() yields one row per GRANTOR, so a privilege
              -- granted to one grantee by two grantors appears twice. pg-delta
              -- models the EFFECTIVE privilege set, not who granted it, so grantor
              -- identity is intentionally ignored — de-duplicate to avoid rendering
              -- a doubled privilege list (GRANT SELECT, SELECT ...), which
              -- Postgres collapses on apply so a re-extract no longer matches and
              -- the proof drifts.
              array_agg(DISTINCT e.privilege_type ORDER BY e.privilege_type) AS privileges,
              array_agg(DISTINCT e.privilege_type ORDER BY e.privilege_type)
                FILTER (WHERE e.is_grantable) AS grantable
       FROM aclexplode(COALESCE(${e}, acldefault('${t}', ${n}))) e
       LEFT JOIN pg_roles g ON g.oid = e.grantee
       GROUP BY 1
       UNION ALL
       SELECT 'PUBLIC', ARRAY[]::text[], NULL::text[]
       WHERE ${e} IS NOT NULL
         AND EXISTS (
           SELECT 1 FROM aclexplode(acldefault('${t}', ${n})) d
           WHERE d.grantee = 0)
         AND NOT EXISTS (
           SELECT 1 FROM aclexplode(${e}) a WHERE a.grantee = 0)
       UNION ALL
       -- Revoked OWNER default (mirror of the PUBLIC case): PostgreSQL grants the
       -- owner its full default on CREATE, so a full owner revoke
       -- (REVOKE ALL ON ... FROM owner) leaves a non-NULL acl with NO owner row.
       -- Emit an empty owner entry so the diff plans a REVOKE ALL FROM owner that
       -- clears the create-time default; without it a freshly created object keeps
       -- PostgreSQL built-in owner privileges and never converges.
       SELECT (SELECT rolname FROM pg_roles WHERE oid = ${n}),
              ARRAY[]::text[], NULL::text[]
       WHERE ${e} IS NOT NULL
         AND EXISTS (
           SELECT 1 FROM aclexplode(acldefault('${t}', ${n})) d
           WHERE d.grantee = ${n})
         AND NOT EXISTS (
           SELECT 1 FROM aclexplode(${e}) a
           WHERE a.grantee = ${n})
     ) acl)`,Ho=(e,t,n,s,o)=>`
    (SELECT json_agg(json_build_object(
        'grantee', d.grantee, 'privileges', d.privileges,
        'grantable', d.grantable, '_initPrivs', d.init_privs
      ) ORDER BY d.grantee)
     FROM (
       WITH cur AS (
         SELECT COALESCE(g.rolname, 'PUBLIC') AS grantee,
                -- DISTINCT across grantors (aclexplode emits one row per grantor);
                -- grantor identity is intentionally ignored — see aclJson.
                array_agg(DISTINCT e.privilege_type ORDER BY e.privilege_type) AS privileges,
                COALESCE(array_agg(DISTINCT e.privilege_type ORDER BY e.privilege_type)
                  FILTER (WHERE e.is_grantable), ARRAY[]::text[]) AS grantable
         FROM aclexplode(COALESCE(${e}, acldefault('${t}', ${n}))) e
         LEFT JOIN pg_roles g ON g.oid = e.grantee
         GROUP BY 1
       ),
       ini AS (
         SELECT COALESCE(g.rolname, 'PUBLIC') AS grantee,
                -- DISTINCT across grantors (aclexplode emits one row per grantor);
                -- grantor identity is intentionally ignored — see aclJson.
                array_agg(DISTINCT e.privilege_type ORDER BY e.privilege_type) AS privileges,
                COALESCE(array_agg(DISTINCT e.privilege_type ORDER BY e.privilege_type)
                  FILTER (WHERE e.is_grantable), ARRAY[]::text[]) AS grantable
         FROM aclexplode(COALESCE(
                (SELECT ip.initprivs FROM pg_init_privs ip
                 WHERE ip.objoid = ${o}
                   AND ip.classoid = '${s}'::regclass
                   AND ip.objsubid = 0),
                acldefault('${t}', ${n}))) e
         LEFT JOIN pg_roles g ON g.oid = e.grantee
         GROUP BY 1
       )
       SELECT
         COALESCE(cur.grantee, ini.grantee) AS grantee,
         COALESCE(cur.privileges, ARRAY[]::text[]) AS privileges,
         COALESCE(cur.grantable, ARRAY[]::text[]) AS grantable,
         CASE WHEN ini.grantee IS NOT NULL
              THEN json_build_object(
                     'privileges', ini.privileges, 'grantable', ini.grantable)
              END AS init_privs
       FROM cur FULL OUTER JOIN ini USING (grantee)
       WHERE cur.privileges IS DISTINCT FROM ini.privileges
          OR cur.grantable IS DISTINCT FROM ini.grantable
     ) d)`,te=(e,t,n,s,o)=>`
    CASE WHEN EXISTS (
      SELECT 1 FROM pg_depend md
      WHERE md.classid = '${s}'::regclass AND md.objid = ${o}
        AND md.refclassid = 'pg_extension'::regclass AND md.deptype = 'e')
    THEN ${Ho(e,t,n,s,o)}
    ELSE ${Ae(e,t,n)}
    END`,z=e=>e==null?[]:e.map(n=>({grantee:n.grantee,privileges:n.privileges,grantable:n.grantable??[],...n.ownerDefault!=null?{ownerDefault:n.ownerDefault}:{},...n._initPrivs!=null?{initPrivs:{privileges:n._initPrivs.privileges,grantable:n._initPrivs.grantable??[]}}:{}})),re=e=>({kind:"schema",name:String(e)});async function Rs(e,t,n=!0){let s=[],o=[],r=[],i=[],l=async A=>{try{return(await e.query(A)).rows}catch(w){throw t!==void 0&&w.code===jo?new it(Uo(A),t):w}},c=(await l("SELECT current_setting('server_version') AS version, current_setting('server_version_num')::int AS num"))[0],a=c?.version??"unknown",u=Number(c?.num??0),d=Math.floor(u/1e4);return{q:l,serverVersion:a,serverVersionNum:u,pgMajor:d,facts:s,edges:o,diagnostics:r,factDiagnostics:i,redactSecrets:n,pushWithMeta:(A,w,N)=>{s.push(A);let L=w.comment;if(typeof L=="string"){let b=A.id.kind==="constraint"&&A.parent?.kind==="domain";s.push({id:{kind:"comment",target:A.id},parent:A.id,payload:b?{text:L,onDomain:!0}:{text:L}})}for(let b of N??[])s.push({id:{kind:"acl",target:A.id,grantee:b.grantee},parent:A.id,payload:{privileges:b.privileges,grantable:b.grantable,...b.ownerDefault!==void 0?{_ownerDefault:b.ownerDefault}:{},...b.initPrivs!==void 0?{_initPrivs:{privileges:b.initPrivs.privileges,grantable:b.initPrivs.grantable}}:{}}})},pushMemberEdge:(A,w)=>{let N=w.ext_member_of;typeof N=="string"&&o.push({from:A,to:{kind:"extension",name:N},kind:"memberOfExtension"})},pushOwnerEdge:(A,w)=>{typeof w=="string"&&w.length>0&&!Fo(w)&&o.push({from:A,to:{kind:"role",name:w},kind:"owner"})},pushSeclabel:(A,w,N)=>{s.push({id:{kind:"securityLabel",target:A,provider:w},parent:A,payload:{label:N}})}}}async function ws(e){let{q:t,edges:n}=e;for(let s of await t(`
    SELECT cn.nspname AS child_schema, cc.relname AS child_name,
           pn.nspname AS parent_schema, pc.relname AS parent_name
    FROM pg_inherits i
    JOIN pg_class cc ON cc.oid = i.inhrelid
    JOIN pg_namespace cn ON cn.oid = cc.relnamespace
    JOIN pg_class pc ON pc.oid = i.inhparent
    JOIN pg_namespace pn ON pn.oid = pc.relnamespace
    WHERE cc.relkind IN ('r', 'p')
      AND cn.nspname NOT IN ${De}`))n.push({from:{kind:"table",schema:String(s.child_schema),name:String(s.child_name)},to:{kind:"table",schema:String(s.parent_schema),name:String(s.parent_name)},kind:"depends"})}async function Ts(e){let{q:t,edges:n,diagnostics:s}=e,o=await t(`
    WITH dep AS (
      SELECT d.classid, d.objid, d.objsubid,
             d.refclassid, d.refobjid, d.refobjsubid
      FROM pg_depend d
      WHERE d.deptype IN ('n', 'a')
        -- sequence OWNED BY is carried as payload + ALTER SEQUENCE … OWNED BY
        -- (pg_dump's model); the auto edge would cycle with the column default
        AND NOT (d.deptype = 'a'
                 AND d.classid = 'pg_class'::regclass
                 AND d.refclassid = 'pg_class'::regclass
                 AND d.refobjsubid > 0
                 AND EXISTS (SELECT 1 FROM pg_class sc
                             WHERE sc.oid = d.objid AND sc.relkind = 'S'))
    ),
    endpoints AS (
      SELECT classid, objid, objsubid FROM dep
      UNION
      SELECT refclassid, refobjid, refobjsubid FROM dep
    ),
    -- one derived table per resolver branch, each built once over its catalog
    rel AS (
      SELECT rc.oid, rc.relkind, json_build_object('kind',
               CASE rc.relkind
                 WHEN 'r' THEN 'table' WHEN 'p' THEN 'table'
                 WHEN 'f' THEN 'foreignTable'
                 WHEN 'v' THEN 'view' WHEN 'm' THEN 'materializedView'
                 WHEN 'i' THEN 'index' WHEN 'I' THEN 'index'
                 WHEN 'S' THEN 'sequence' END,
               'schema', rn.nspname, 'name', rc.relname) AS id
      FROM pg_class rc JOIN pg_namespace rn ON rn.oid = rc.relnamespace
      WHERE rc.relkind IN ('r','p','f','v','m','i','I','S')
    ),
    cbi AS (
      -- a constraint-backed index resolves to its constraint, not the index
      SELECT con.conindid AS oid,
             json_build_object('kind','constraint','schema',cn.nspname,
                               'table',cc.relname,'name',con.conname) AS id
      FROM pg_constraint con
      JOIN pg_class cc ON cc.oid = con.conrelid
      JOIN pg_namespace cn ON cn.oid = cc.relnamespace
      WHERE con.contype IN ('p','u','x') AND con.conindid <> 0
    ),
    col AS (
      SELECT att.attrelid AS oid, att.attnum AS subid,
             json_build_object('kind','column','schema',rn.nspname,
                               'table',rc.relname,'name',att.attname) AS id
      FROM pg_attribute att
      JOIN pg_class rc ON rc.oid = att.attrelid AND rc.relkind IN ('r','p','f')
      JOIN pg_namespace rn ON rn.oid = rc.relnamespace
      WHERE att.attnum > 0 AND NOT att.attisdropped
    ),
    proc AS (
      -- prokind 'w' (window functions) is extracted as a function fact
      -- (src/extract/routines.ts: only 'p' -> procedure, everything else ->
      -- function), so it MUST be resolvable here -- otherwise a pg_depend edge
      -- into a user window function resolves to NULL and is silently dropped,
      -- and a view/rule that uses it is never rebuilt against it (issue #333).
      -- The kind CASE already maps 'w' to 'function' via ELSE.
      SELECT pp.oid, json_build_object(
               'kind', CASE pp.prokind WHEN 'a' THEN 'aggregate' WHEN 'p' THEN 'procedure' ELSE 'function' END,
               'schema', pn.nspname, 'name', pp.proname,
               'args', ARRAY(SELECT format_type(t.t, NULL)
                             FROM unnest(pp.proargtypes) WITH ORDINALITY AS t(t, ord)
                             ORDER BY t.ord)::text[]) AS id
      FROM pg_proc pp JOIN pg_namespace pn ON pn.oid = pp.pronamespace
      WHERE pp.prokind IN ('f','p','a','w')
    ),
    tcon AS (
      SELECT con.oid, json_build_object('kind','constraint','schema',cn.nspname,
                               'table',cc.relname,'name',con.conname) AS id
      FROM pg_constraint con
      JOIN pg_class cc ON cc.oid = con.conrelid
      JOIN pg_namespace cn ON cn.oid = cc.relnamespace
      WHERE con.conrelid <> 0
    ),
    dcon AS (
      SELECT con.oid, json_build_object('kind','constraint','schema',dn.nspname,
                               'table',dt.typname,'name',con.conname) AS id
      FROM pg_constraint con
      JOIN pg_type dt ON dt.oid = con.contypid
      JOIN pg_namespace dn ON dn.oid = dt.typnamespace
      WHERE con.contypid <> 0
    ),
    typ AS (
      -- Resolve array types (typcategory 'A') to their ELEMENT type: a column or
      -- argument of an array type records its pg_depend edge against the implicit
      -- array type (e.g. _user_defined_filter), but the managed fact is the
      -- element type. Mapping the array oid to the element's stable id keeps the
      -- depends-on-element ordering correct for array-of-composite/domain/enum
      -- columns and arguments (regression: realtime.subscription has a
      -- user_defined_filter array column; without this the table/function was
      -- ordered before the type). An array of a base type (e.g. int4) resolves to
      -- a pg_catalog element that the typtype filter drops below -- harmless, as
      -- builtins are unmanaged.
      SELECT tt.oid,
        CASE
          WHEN base.typrelid <> 0::oid AND rc.oid IS NOT NULL THEN
            json_build_object(
              'kind', CASE rc.relkind
                        WHEN 'v' THEN 'view'
                        WHEN 'm' THEN 'materializedView'
                        WHEN 'f' THEN 'foreignTable'
                        ELSE 'table'
                      END,
              'schema', rn.nspname,
              'name', rc.relname)
          ELSE json_build_object(
            'kind', CASE base.typtype WHEN 'd' THEN 'domain' ELSE 'type' END,
            'schema', tn.nspname,
            'name', base.typname)
        END AS id
      FROM pg_type tt
      JOIN pg_type base
        ON base.oid = CASE
             WHEN tt.typtype = 'b' AND tt.typcategory = 'A' AND tt.typelem <> 0
             THEN tt.typelem ELSE tt.oid END
      JOIN pg_namespace tn ON tn.oid = base.typnamespace
      LEFT JOIN pg_class rc ON rc.oid = base.typrelid
                           AND rc.relkind IN ('r', 'p', 'f', 'v', 'm')
      LEFT JOIN pg_namespace rn ON rn.oid = rc.relnamespace
      WHERE base.typtype IN ('d', 'e', 'c', 'r')
    ),
    -- a composite type's pg_class (relkind c) endpoint resolves to the composite
    -- TYPE fact. pg_depend records a composite attribute's type dependency as
    -- (classid=pg_class, objid=composite pg_class, objsubid=attnum) -> pg_type,
    -- but the col CTE excludes relkind c. Attributing the edge to the top-level
    -- type (not the folded typeAttribute child) keeps the create/teardown
    -- ordering of a composite-uses-domain/type chain correct and independent of
    -- child-drop folding.
    comptype AS (
      SELECT cc.oid, json_build_object('kind','type','schema',cn.nspname,
                               'name',cc.relname) AS id
      FROM pg_class cc JOIN pg_namespace cn ON cn.oid = cc.relnamespace
      WHERE cc.relkind = 'c'
    ),
    extm AS (
      -- a reference INTO an extension-member object resolves to the extension,
      -- not the member fact (4b Stage 3): the member is observed but projected
      -- out by default, so a member-targeted edge would be pruned with it and
      -- lose the dependent's ordering on the extension. One join keyed by
      -- (classid, objid) replaces the old per-branch nested pg_depend lookups;
      -- an object belongs to at most one extension, so (classid, objid) is
      -- unique here and the join never multiplies dep rows (the old form's
      -- LIMIT 1 was guarding the same single-membership invariant).
      SELECT ed.classid, ed.objid,
             json_build_object('kind','extension','name',ext.extname) AS id
      FROM pg_depend ed JOIN pg_extension ext ON ext.oid = ed.refobjid
      WHERE ed.refclassid = 'pg_extension'::regclass AND ed.deptype = 'e'
    ),
    coll AS (
      SELECT cl.oid, json_build_object('kind','collation','schema',cln.nspname,
                               'name',cl.collname) AS id
      FROM pg_collation cl JOIN pg_namespace cln ON cln.oid = cl.collnamespace
    ),
    pol AS (
      SELECT po.oid, json_build_object('kind','policy','schema',pn.nspname,
                               'table',pc.relname,'name',po.polname) AS id
      FROM pg_policy po
      JOIN pg_class pc ON pc.oid = po.polrelid
      JOIN pg_namespace pn ON pn.oid = pc.relnamespace
    ),
    evt AS (
      SELECT et.oid, json_build_object('kind','eventTrigger','name',et.evtname) AS id
      FROM pg_event_trigger et
    ),
    pub AS (
      SELECT pb.oid, json_build_object('kind','publication','name',pb.pubname) AS id
      FROM pg_publication pb
    ),
    pubrel AS (
      SELECT pr.oid, json_build_object('kind','publication','name',pb.pubname) AS id
      FROM pg_publication_rel pr JOIN pg_publication pb ON pb.oid = pr.prpubid
    ),
    fdw AS (
      SELECT fd.oid, json_build_object('kind','fdw','name',fd.fdwname) AS id
      FROM pg_foreign_data_wrapper fd
    ),
    srv AS (
      SELECT fs.oid, json_build_object('kind','server','name',fs.srvname) AS id
      FROM pg_foreign_server fs
    ),
    adef AS (
      SELECT ad.oid, json_build_object('kind','default','schema',dn.nspname,
                               'table',dc.relname,'name',da.attname) AS id
      FROM pg_attrdef ad
      JOIN pg_class dc ON dc.oid = ad.adrelid
      JOIN pg_namespace dn ON dn.oid = dc.relnamespace
      JOIN pg_attribute da ON da.attrelid = ad.adrelid AND da.attnum = ad.adnum
    ),
    rw AS (
      -- A pg_rewrite endpoint resolves two different ways (issue #333):
      --  - the '_RETURN' rule of a view/matview IS the relation's definition,
      --    so its deps are attributed to the owning view/matview -- rebuilding
      --    the relation recreates the rule. Only views/matviews carry a
      --    '_RETURN' rule, so the relkind CASE only ever sees 'v'/'m' here.
      --  - ANY other (user-created) rule is its OWN rule fact
      --    (src/extract/relations.ts extracts every rulename <> '_RETURN' on any
      --    relkind), so its deps must be attributed to the RULE fact, not the
      --    owning relation. This is what lets a rule on a PLAIN TABLE (relkind
      --    'r'/'p') be rebuilt against a function it references before that
      --    function is dropped. CONSTRAINT: a user rule ON A VIEW (not
      --    '_RETURN') likewise resolves to the rule fact, exactly like a rule on
      --    a table -- never folded into the view's '_RETURN' definition.
      SELECT r.oid,
        CASE WHEN r.rulename = '_RETURN'
          THEN json_build_object(
                 'kind', CASE vc.relkind WHEN 'm' THEN 'materializedView' ELSE 'view' END,
                 'schema', vn.nspname, 'name', vc.relname)
          ELSE json_build_object(
                 'kind', 'rule', 'schema', vn.nspname,
                 'table', vc.relname, 'name', r.rulename)
        END AS id
      FROM pg_rewrite r
      JOIN pg_class vc ON vc.oid = r.ev_class
      JOIN pg_namespace vn ON vn.oid = vc.relnamespace
    ),
    trg AS (
      SELECT tg.oid, json_build_object('kind','trigger','schema',tn.nspname,
                               'table',tc.relname,'name',tg.tgname) AS id
      FROM pg_trigger tg
      JOIN pg_class tc ON tc.oid = tg.tgrelid
      JOIN pg_namespace tn ON tn.oid = tc.relnamespace
      WHERE NOT tg.tgisinternal
    ),
    nsp AS (
      SELECT ns.oid, json_build_object('kind','schema','name',ns.nspname) AS id
      FROM pg_namespace ns
    ),
    -- MATERIALIZED: resolved is referenced twice (rd + rr joins); force a single
    -- evaluation over the distinct endpoint set.
    resolved AS MATERIALIZED (
      SELECT e.classid, e.objid, e.objsubid,
        CASE
          WHEN e.classid = 'pg_class'::regclass AND e.objsubid = 0
            THEN COALESCE(cbi.id, comptype.id, rel.id)
          WHEN e.classid = 'pg_class'::regclass AND e.objsubid > 0
            -- a real column; a composite type's attribute resolves to its type;
            -- else a view/matview column resolves to its relation
            THEN COALESCE(col.id, comptype.id, CASE WHEN rel.relkind IN ('v','m') THEN rel.id END)
          WHEN e.classid = 'pg_proc'::regclass THEN COALESCE(extm.id, proc.id)
          WHEN e.classid = 'pg_constraint'::regclass THEN COALESCE(tcon.id, dcon.id)
          WHEN e.classid = 'pg_type'::regclass THEN COALESCE(extm.id, typ.id)
          WHEN e.classid = 'pg_opclass'::regclass THEN extm.id
          WHEN e.classid = 'pg_opfamily'::regclass THEN extm.id
          WHEN e.classid = 'pg_operator'::regclass THEN extm.id
          WHEN e.classid = 'pg_collation'::regclass THEN coll.id
          WHEN e.classid = 'pg_policy'::regclass THEN pol.id
          WHEN e.classid = 'pg_event_trigger'::regclass THEN evt.id
          WHEN e.classid = 'pg_publication'::regclass THEN pub.id
          WHEN e.classid = 'pg_publication_rel'::regclass THEN pubrel.id
          WHEN e.classid = 'pg_foreign_data_wrapper'::regclass
            THEN COALESCE(extm.id, fdw.id)
          WHEN e.classid = 'pg_foreign_server'::regclass THEN srv.id
          WHEN e.classid = 'pg_attrdef'::regclass THEN adef.id
          WHEN e.classid = 'pg_rewrite'::regclass THEN rw.id
          WHEN e.classid = 'pg_trigger'::regclass THEN trg.id
          WHEN e.classid = 'pg_namespace'::regclass THEN nsp.id
          ELSE NULL
        END AS id
      FROM endpoints e
      LEFT JOIN rel    ON rel.oid    = e.objid AND e.classid = 'pg_class'::regclass
      LEFT JOIN cbi    ON cbi.oid    = e.objid AND e.classid = 'pg_class'::regclass AND e.objsubid = 0
      LEFT JOIN col    ON col.oid    = e.objid AND col.subid = e.objsubid AND e.classid = 'pg_class'::regclass
      LEFT JOIN proc   ON proc.oid   = e.objid AND e.classid = 'pg_proc'::regclass
      LEFT JOIN tcon   ON tcon.oid   = e.objid AND e.classid = 'pg_constraint'::regclass
      LEFT JOIN dcon   ON dcon.oid   = e.objid AND e.classid = 'pg_constraint'::regclass
      LEFT JOIN typ    ON typ.oid    = e.objid AND e.classid = 'pg_type'::regclass
      LEFT JOIN comptype ON comptype.oid = e.objid AND e.classid = 'pg_class'::regclass
      LEFT JOIN extm   ON extm.classid = e.classid AND extm.objid = e.objid
      LEFT JOIN coll   ON coll.oid   = e.objid AND e.classid = 'pg_collation'::regclass
      LEFT JOIN pol    ON pol.oid    = e.objid AND e.classid = 'pg_policy'::regclass
      LEFT JOIN evt    ON evt.oid    = e.objid AND e.classid = 'pg_event_trigger'::regclass
      LEFT JOIN pub    ON pub.oid    = e.objid AND e.classid = 'pg_publication'::regclass
      LEFT JOIN pubrel ON pubrel.oid = e.objid AND e.classid = 'pg_publication_rel'::regclass
      LEFT JOIN fdw    ON fdw.oid    = e.objid AND e.classid = 'pg_foreign_data_wrapper'::regclass
      LEFT JOIN srv    ON srv.oid    = e.objid AND e.classid = 'pg_foreign_server'::regclass
      LEFT JOIN adef   ON adef.oid   = e.objid AND e.classid = 'pg_attrdef'::regclass
      LEFT JOIN rw     ON rw.oid     = e.objid AND e.classid = 'pg_rewrite'::regclass
      LEFT JOIN trg    ON trg.oid    = e.objid AND e.classid = 'pg_trigger'::regclass
      LEFT JOIN nsp    ON nsp.oid    = e.objid AND e.classid = 'pg_namespace'::regclass
    )
    SELECT rd.id AS dependent, rr.id AS referenced
    FROM dep
    JOIN resolved rd ON rd.classid = dep.classid
                    AND rd.objid = dep.objid
                    AND rd.objsubid = dep.objsubid
    JOIN resolved rr ON rr.classid = dep.refclassid
                    AND rr.objid = dep.refobjid
                    AND rr.objsubid = dep.refobjsubid`),r=u=>{if(u==null)return;let d=u;switch(d.kind){case"schema":return{kind:"schema",name:d.name};case"eventTrigger":case"publication":case"fdw":case"server":case"extension":return{kind:d.kind,name:d.name};case"table":case"view":case"materializedView":case"index":case"sequence":case"domain":case"type":case"collation":case"foreignTable":return{kind:d.kind,schema:d.schema,name:d.name};case"column":case"constraint":case"default":case"trigger":case"policy":case"rule":return{kind:d.kind,schema:d.schema,table:d.table,name:d.name};case"function":case"procedure":case"aggregate":return{kind:d.kind,schema:d.schema,name:d.name,args:d.args.map(String)};default:return}},i=u=>{let d=m=>m==="pg_catalog"||m==="information_schema"||m.startsWith("pg_toast")||m.startsWith("pg_temp"),f=u.schema;return typeof f=="string"&&d(f)?!0:u.kind==="schema"?d(u.name):!1},l=(u,d)=>{if(u==null)return;let f=r(u);if(f===void 0)return s.push({code:"unresolved_dependency",severity:"warning",message:`pg_depend ${d} ${JSON.stringify(u)} was recognized by the resolver but the codec could not build its id — resolver/codec mismatch`}),f;if(!i(f))return f},c=new Set,a=new Set(e.facts.filter(u=>u.id.kind==="default").map(u=>p(u.id)));for(let u of o){let d=l(u.dependent,"dependent"),f=l(u.referenced,"referenced");if(!d||!f)continue;let m=JSON.stringify([d,f]);if(!c.has(m)&&(c.add(m),n.push({from:d,to:f,kind:"depends"}),d.kind==="default"&&!a.has(p(d)))){let E={kind:"column",schema:d.schema,table:d.table,name:d.name};if(p(E)===p(f))continue;let O=JSON.stringify([E,f]);if(c.has(O))continue;c.add(O),n.push({from:E,to:f,kind:"depends"})}}}async function Is(e){let{q:t,pushWithMeta:n,pushOwnerEdge:s}=e;for(let o of await t(`
    SELECT e.evtname AS name, e.evtevent AS event, e.evtenabled AS enabled,
           COALESCE(e.evttags, '{}')::text[] AS tags,
           pn.nspname AS func_schema, p.proname AS func_name,
           r.rolname AS owner,
           obj_description(e.oid, 'pg_event_trigger') AS comment
    FROM pg_event_trigger e
    JOIN pg_proc p ON p.oid = e.evtfoid
    JOIN pg_namespace pn ON pn.oid = p.pronamespace
    JOIN pg_roles r ON r.oid = e.evtowner
    WHERE ${J("pg_event_trigger","e.oid")}
    ORDER BY e.evtname`)){let r={kind:"eventTrigger",name:String(o.name)};n({id:r,payload:{event:String(o.event),enabled:String(o.enabled),tags:o.tags.map(String).sort(),functionSchema:String(o.func_schema),functionName:String(o.func_name)}},o),s(r,o.owner)}}var Ls="intent-unkeyed";var at="user-mapping-unreadable";var Wo=new Set(["host","hostaddr","port","dbname","user","sslmode","sslcompression","sslcert","sslkey","sslrootcert","sslcrl","sslcrldir","sslsni","requirepeer","krbsrvname","gsslib","sspi","gssencmode","gssdelegation","channel_binding","target_session_attrs","service","application_name","fallback_application_name","connect_timeout","client_encoding","options","keepalives","keepalives_idle","keepalives_interval","keepalives_count","tcp_user_timeout","replication","load_balance_hosts","use_remote_estimate","fdw_startup_cost","fdw_tuple_cost","fetch_size","batch_size","async_capable","analyze_sampling","parallel_commit","parallel_abort","password_required","extensions","updatable","truncatable","schema_name","table_name","column_name","schema","database","table","format","header","delimiter","quote","escape","encoding","compression","filename","program","null","force_not_null","force_null","region","endpoint","bucket","prefix","location","project_id","dataset_id","dataset","workspace","organization","api_version"]),ct="host=__CONN_HOST__ port=__CONN_PORT__ dbname=__CONN_DBNAME__ user=__CONN_USER__ password=__CONN_PASSWORD__";function Yo(e){let t=e.indexOf("=");if(t===-1)return e;let n=e.slice(0,t);return Wo.has(n.toLowerCase())?e:`${n}=__OPTION_${n.toUpperCase()}__`}function $s(e){return e.map(Yo)}async function Cs(e){let{q:t,facts:n,pushWithMeta:s,pushOwnerEdge:o,factDiagnostics:r}=e,i=a=>e.redactSecrets?$s(a):a;for(let a of await t(`
    SELECT f.fdwname AS name, r.rolname AS owner,
           CASE WHEN f.fdwhandler <> 0 THEN f.fdwhandler::regproc::text END AS handler,
           CASE WHEN f.fdwvalidator <> 0 THEN f.fdwvalidator::regproc::text END AS validator,
           COALESCE(ARRAY(SELECT opt FROM unnest(f.fdwoptions) opt ORDER BY opt), '{}')::text[] AS options,
           obj_description(f.oid, 'pg_foreign_data_wrapper') AS comment,
           ${Ae("f.fdwacl","F","f.fdwowner")} AS acl
    FROM pg_foreign_data_wrapper f
    JOIN pg_roles r ON r.oid = f.fdwowner
    WHERE ${J("pg_foreign_data_wrapper","f.oid")}
    ORDER BY f.fdwname`)){let u={kind:"fdw",name:String(a.name)};s({id:u,payload:{handler:a.handler==null?null:a.handler,validator:a.validator==null?null:a.validator,options:i(a.options.map(String))}},a,z(a.acl)),o(u,a.owner)}for(let a of await t(`
    SELECT s.srvname AS name, f.fdwname AS fdw, r.rolname AS owner,
           s.srvtype AS type, s.srvversion AS version,
           (SELECT e.extname FROM pg_depend d
            JOIN pg_extension e ON e.oid = d.refobjid
            WHERE d.classid = 'pg_foreign_data_wrapper'::regclass
              AND d.objid = f.oid
              AND d.refclassid = 'pg_extension'::regclass
              AND d.deptype = 'e'
            LIMIT 1) AS fdw_extension,
           COALESCE(ARRAY(SELECT opt FROM unnest(s.srvoptions) opt ORDER BY opt), '{}')::text[] AS options,
           obj_description(s.oid, 'pg_foreign_server') AS comment,
           ${Ae("s.srvacl","S","s.srvowner")} AS acl
    FROM pg_foreign_server s
    JOIN pg_foreign_data_wrapper f ON f.oid = s.srvfdw
    JOIN pg_roles r ON r.oid = s.srvowner
    WHERE ${J("pg_foreign_server","s.oid")}
    ORDER BY s.srvname`)){let u={kind:"server",name:String(a.name)};s({id:u,parent:a.fdw_extension!=null?{kind:"extension",name:a.fdw_extension}:{kind:"fdw",name:String(a.fdw)},payload:{fdw:String(a.fdw),type:a.type==null?null:a.type,version:a.version==null?null:a.version,options:i(a.options.map(String))}},a,z(a.acl)),o(u,a.owner)}let l=!!(await t("SELECT has_table_privilege('pg_catalog.pg_user_mapping', 'SELECT') AS ok"))[0]?.ok,c=l?await t(`
    SELECT s.srvname AS server, COALESCE(r.rolname, 'PUBLIC') AS role,
           COALESCE(ARRAY(SELECT opt FROM unnest(u.umoptions) opt ORDER BY opt), '{}')::text[] AS options
    FROM pg_user_mapping u
    JOIN pg_foreign_server s ON s.oid = u.umserver
    LEFT JOIN pg_roles r ON r.oid = u.umuser
    WHERE ${J("pg_foreign_server","s.oid")}
    ORDER BY s.srvname, 2`):await t(`
    SELECT v.srvname AS server,
           CASE WHEN v.umuser = 0 THEN 'PUBLIC' ELSE v.usename END AS role,
           COALESCE(ARRAY(SELECT opt FROM unnest(v.umoptions) opt ORDER BY opt), '{}')::text[] AS options,
           (v.umoptions IS NOT NULL
            OR (v.umuser <> 0 AND v.usename = current_user
                AND (pg_has_role(s.srvowner, 'USAGE') OR has_server_privilege(s.oid, 'USAGE')))
            OR (v.umuser = 0 AND pg_has_role(s.srvowner, 'USAGE'))) AS options_known
    FROM pg_user_mappings v
    JOIN pg_foreign_server s ON s.oid = v.srvid
    WHERE ${J("pg_foreign_server","v.srvid")}
    ORDER BY v.srvname, 2`);for(let a of c){let u=String(a.server),d=String(a.role),f={kind:"userMapping",server:u,role:d};if(!l&&a.options_known===!1){r.push({code:at,severity:"warning",subject:f,message:`User-mapping options for ${u}/${d} are hidden from the current role by pg_user_mappings (it isn't the mapping's server owner, the mapped user, or a member of the PUBLIC mapping's server owner) — the mapping's state is unknown, so it was SKIPPED rather than recorded with fabricated empty options.`});continue}n.push({id:f,parent:{kind:"server",name:u},payload:{options:i(a.options.map(String))}})}for(let a of await t(`
    SELECT n.nspname AS schema, c.relname AS name, r.rolname AS owner,
           s.srvname AS server,
           COALESCE(ARRAY(SELECT opt FROM unnest(ft.ftoptions) opt ORDER BY opt), '{}')::text[] AS options,
           obj_description(c.oid, 'pg_class') AS comment,
           ${Ae("c.relacl","r","c.relowner")} AS acl
    FROM pg_foreign_table ft
    JOIN pg_class c ON c.oid = ft.ftrelid
    JOIN pg_foreign_server s ON s.oid = ft.ftserver
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_roles r ON r.oid = c.relowner
    WHERE ${Y}
      AND ${J("pg_class","c.oid")}
    ORDER BY n.nspname, c.relname`)){let u={kind:"foreignTable",schema:String(a.schema),name:String(a.name)};s({id:u,parent:{kind:"server",name:String(a.server)},payload:{server:String(a.server),options:i(a.options.map(String))}},a,z(a.acl)),o(u,a.owner)}}async function ks(e){let{q:t,pushWithMeta:n}=e;for(let s of await t(`
    SELECT n.nspname AS schema, c.relname AS table, pol.polname AS name,
           pol.polcmd AS cmd, pol.polpermissive AS permissive,
           pg_get_expr(pol.polqual, pol.polrelid) AS using_expr,
           pg_get_expr(pol.polwithcheck, pol.polrelid) AS check_expr,
           CASE WHEN pol.polroles = '{0}'::oid[] THEN ARRAY['PUBLIC']::text[]
                ELSE ARRAY(SELECT rolname::text FROM pg_roles WHERE oid = ANY(pol.polroles) ORDER BY rolname)
           END AS roles,
           obj_description(pol.oid, 'pg_policy') AS comment
    FROM pg_policy pol
    JOIN pg_class c ON c.oid = pol.polrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE ${Y}
      AND ${J("pg_class","c.oid")}
    ORDER BY n.nspname, c.relname, pol.polname`))n({id:{kind:"policy",schema:String(s.schema),table:String(s.table),name:String(s.name)},parent:{kind:"table",schema:String(s.schema),name:String(s.table)},payload:{cmd:String(s.cmd),permissive:!!s.permissive,usingExpr:s.using_expr==null?null:s.using_expr,checkExpr:s.check_expr==null?null:s.check_expr,roles:s.roles.map(String)}},s)}async function xs(e){let{q:t,facts:n,pushWithMeta:s,pushOwnerEdge:o,pgMajor:r}=e,i=r>=15?`(SELECT array_agg(att.attname::text ORDER BY att.attname)
                          FROM unnest(pr.prattrs) WITH ORDINALITY AS pa(attnum, ord)
                          JOIN pg_attribute att ON att.attrelid = pc.oid AND att.attnum = pa.attnum)`:"NULL",l=r>=15?"pg_get_expr(pr.prqual, pr.prrelid)":"NULL",c=r>=15?`(SELECT array_agg(pn2.nspname::text ORDER BY 1)
            FROM pg_publication_namespace pns
            JOIN pg_namespace pn2 ON pn2.oid = pns.pnnspid
            WHERE pns.pnpubid = p.oid)`:"NULL::text[]";for(let a of await t(`
    SELECT p.pubname AS name, r.rolname AS owner,
           p.puballtables AS all_tables, p.pubviaroot AS via_root,
           p.pubinsert, p.pubupdate, p.pubdelete, p.pubtruncate,
           (SELECT json_agg(json_build_object(
              'schema', pn.nspname, 'name', pc.relname,
              'columns', ${i},
              'where', ${l}
            ) ORDER BY pn.nspname, pc.relname)
            FROM pg_publication_rel pr
            JOIN pg_class pc ON pc.oid = pr.prrelid
            JOIN pg_namespace pn ON pn.oid = pc.relnamespace
            WHERE pr.prpubid = p.oid) AS tables,
           ${c} AS schemas,
           obj_description(p.oid, 'pg_publication') AS comment
    FROM pg_publication p
    JOIN pg_roles r ON r.oid = p.pubowner
    WHERE ${J("pg_publication","p.oid")}
    ORDER BY p.pubname`)){let u=[];a.pubinsert&&u.push("insert"),a.pubupdate&&u.push("update"),a.pubdelete&&u.push("delete"),a.pubtruncate&&u.push("truncate");let d=String(a.name),f={kind:"publication",name:d};s({id:f,payload:{allTables:!!a.all_tables,viaRoot:!!a.via_root,publish:u}},a),o(f,a.owner);let m=a.tables??[];for(let E of m)n.push({id:{kind:"publicationRel",publication:d,schema:E.schema,table:E.name},parent:f,payload:{columns:E.columns==null?null:E.columns.map(String),where:E.where??null}});for(let E of(a.schemas??[]).map(String))n.push({id:{kind:"publicationSchema",publication:d,schema:E},parent:f,payload:{}})}}async function vs(e){let{q:t,pushWithMeta:n,pushOwnerEdge:s,pgMajor:o}=e,r=o>=16?"CASE s.substream WHEN 'p' THEN 'parallel' WHEN 't' THEN 'on' ELSE 'off' END":"CASE WHEN s.substream THEN 'on' ELSE 'off' END",i=o>=15?"s.subdisableonerr":"NULL::boolean",l=o>=15?"(s.subtwophasestate <> 'd')":"NULL::boolean",c=o>=16?"s.subrunasowner":"NULL::boolean",a=o>=16?"s.suborigin":"NULL::text",d=!!(await t("SELECT has_column_privilege('pg_subscription', 'subconninfo', 'SELECT') AS ok"))[0]?.ok?"s.subconninfo":"NULL::text";for(let f of await t(`
    SELECT s.subname AS name, r.rolname AS owner, s.subenabled AS enabled,
           ${d} AS conninfo, s.subslotname AS slot_name,
           s.subpublications::text[] AS publications,
           s.subbinary AS binary,
           ${r} AS streaming,
           s.subsynccommit AS synchronous_commit,
           ${i} AS disable_on_error,
           ${l} AS two_phase,
           ${c} AS run_as_owner,
           ${a} AS origin,
           obj_description(s.oid, 'pg_subscription') AS comment
    FROM pg_subscription s
    JOIN pg_roles r ON r.oid = s.subowner
    JOIN pg_database d ON d.oid = s.subdbid
    WHERE d.datname = current_database()
    ORDER BY s.subname`)){let m={kind:"subscription",name:String(f.name)};n({id:m,payload:{_serverMajor:o,enabled:!!f.enabled,conninfo:e.redactSecrets||f.conninfo==null?ct:f.conninfo,slotName:f.slot_name==null?null:f.slot_name,publications:f.publications.map(String).sort(),binary:!!f.binary,streaming:String(f.streaming),synchronousCommit:String(f.synchronous_commit),disableOnError:f.disable_on_error==null?null:!!f.disable_on_error,twoPhase:f.two_phase==null?null:!!f.two_phase,runAsOwner:f.run_as_owner==null?null:!!f.run_as_owner,origin:f.origin==null?null:f.origin}},f),s(m,f.owner)}}function Ds(e){let t=e.reloptions;if(t==null)return null;let n=t.slice().sort();return n.length>0?n:null}async function Ms(e){let{q:t,pushWithMeta:n,pushMemberEdge:s,pushOwnerEdge:o}=e;for(let r of await t(`
    SELECT n.nspname AS schema, c.relname AS name, r.rolname AS owner,
           c.relpersistence AS persistence,
           c.relrowsecurity AS row_security,
           c.relforcerowsecurity AS force_row_security,
           c.relreplident AS replica_identity,
           (SELECT ic.relname FROM pg_index i
            JOIN pg_class ic ON ic.oid = i.indexrelid
            WHERE i.indrelid = c.oid AND i.indisreplident) AS replica_identity_index,
           CASE WHEN c.relkind = 'p' THEN pg_get_partkeydef(c.oid) END AS partition_key,
           c.reloptions AS reloptions,
           pg_get_expr(c.relpartbound, c.oid) AS partition_bound,
           (SELECT json_build_object('schema', pn.nspname, 'name', pc.relname)
            FROM pg_inherits inh
            JOIN pg_class pc ON pc.oid = inh.inhparent
            JOIN pg_namespace pn ON pn.oid = pc.relnamespace
            WHERE inh.inhrelid = c.oid
            -- Multi-parent support is tracked separately; until then capture the
            -- FIRST-declared parent deterministically. Without ORDER BY the
            -- unordered LIMIT 1 can pick a different parent across extractions,
            -- flapping the fact hash and causing spurious table replaces.
            ORDER BY inh.inhseqno
            LIMIT 1) AS parent_table,
           obj_description(c.oid, 'pg_class') AS comment,
           ${te("c.relacl","r","c.relowner","pg_class","c.oid")} AS acl,
           ${Z("pg_class","c.oid")} AS ext_member_of
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_roles r ON r.oid = c.relowner
    WHERE c.relkind IN ('r', 'p') AND ${Y}
    ORDER BY n.nspname, c.relname`)){let i={kind:"table",schema:String(r.schema),name:String(r.name)};n({id:i,parent:re(r.schema),payload:{persistence:String(r.persistence),rowSecurity:!!r.row_security,forceRowSecurity:!!r.force_row_security,replicaIdentity:String(r.replica_identity),replicaIdentityIndex:r.replica_identity_index==null?null:r.replica_identity_index,partitionKey:r.partition_key==null?null:r.partition_key,partitionBound:r.partition_bound==null?null:r.partition_bound,parentTable:r.parent_table==null?null:r.parent_table,reloptions:Ds(r)}},r,z(r.acl)),s(i,r),o(i,r.owner)}}async function Bs(e){let{q:t,facts:n,pushWithMeta:s}=e;for(let o of await t(`
    SELECT n.nspname AS schema, c.relname AS table, a.attname AS name,
           a.attnum AS position,
           c.relkind AS table_kind,
           format_type(a.atttypid, a.atttypmod) AS type,
           a.attnotnull AS not_null,
           NULLIF(a.attidentity, '') AS identity,
           (SELECT json_build_object('schema', sn.nspname, 'name', sc.relname)
            FROM pg_depend d
            JOIN pg_class sc ON sc.oid = d.objid
            JOIN pg_namespace sn ON sn.oid = sc.relnamespace
            WHERE d.classid = 'pg_class'::regclass
              AND d.refclassid = 'pg_class'::regclass
              AND d.refobjid = c.oid AND d.refobjsubid = a.attnum
              AND d.deptype = 'i' AND sc.relkind = 'S'
            LIMIT 1) AS identity_sequence,
           (SELECT json_build_object(
                     'increment', sq.seqincrement::text, 'start', sq.seqstart::text,
                     'minValue', sq.seqmin::text, 'maxValue', sq.seqmax::text,
                     'cache', sq.seqcache::text, 'cycle', sq.seqcycle)
            FROM pg_depend d
            JOIN pg_sequence sq ON sq.seqrelid = d.objid
            WHERE d.classid = 'pg_class'::regclass
              AND d.refclassid = 'pg_class'::regclass
              AND d.refobjid = c.oid AND d.refobjsubid = a.attnum
              AND d.deptype = 'i'
            LIMIT 1) AS identity_options,
           NULLIF(a.attgenerated, '') AS generated,
           CASE WHEN a.attcollation <> t.typcollation THEN (
             SELECT quote_ident(cn.nspname) || '.' || quote_ident(co.collname)
             FROM pg_collation co JOIN pg_namespace cn ON cn.oid = co.collnamespace
             WHERE co.oid = a.attcollation)
           END AS collation,
           pg_get_expr(ad.adbin, ad.adrelid) AS default_expr,
           col_description(c.oid, a.attnum) AS comment,
           -- column-level ACL (pg_attribute.attacl). Columns have no built-in
           -- default privileges, so acldefault('c', owner) is empty: a NULL
           -- attacl yields no acl facts, and a non-NULL one lists only explicit
           -- GRANT SELECT/INSERT/UPDATE/REFERENCES (col) entries.
           ${Ae("a.attacl","c","c.relowner")} AS acl
    FROM pg_attribute a
    JOIN pg_class c ON c.oid = a.attrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_type t ON t.oid = a.atttypid
    LEFT JOIN pg_attrdef ad ON ad.adrelid = c.oid AND ad.adnum = a.attnum
    WHERE c.relkind IN ('r', 'p', 'f') AND a.attnum > 0 AND NOT a.attisdropped
      AND a.attislocal
      AND ${Y}
      AND ${J("pg_class","c.oid")}
    ORDER BY n.nspname, c.relname, a.attname`)){let r={kind:String(o.table_kind)==="f"?"foreignTable":"table",schema:String(o.schema),name:String(o.table)},i={kind:"column",schema:String(o.schema),table:String(o.table),name:String(o.name)},l=o.generated!=null;s({id:i,parent:r,payload:{_position:Number(o.position),type:String(o.type),notNull:!!o.not_null,identity:o.identity==null?null:{generation:o.identity,sequence:o.identity_sequence,options:o.identity_options==null?null:o.identity_options},collation:o.collation==null?null:o.collation,generatedExpr:l&&o.default_expr!=null?o.default_expr:null}},o),!l&&o.default_expr!=null&&n.push({id:{kind:"default",schema:String(o.schema),table:String(o.table),name:String(o.name)},parent:i,payload:{expr:o.default_expr}});for(let c of z(o.acl))n.push({id:{kind:"acl",target:r,grantee:c.grantee,column:String(o.name)},parent:i,payload:{privileges:c.privileges,grantable:c.grantable}})}}async function qs(e){let{q:t,pushWithMeta:n}=e;for(let s of await t(`
    SELECT n.nspname AS schema, c.relname AS table, con.conname AS name,
           c.relkind AS table_kind,
           pg_get_constraintdef(con.oid) AS def,
           con.contype AS type, con.convalidated AS validated,
           obj_description(con.oid, 'pg_constraint') AS comment
    FROM pg_constraint con
    JOIN pg_class c ON c.oid = con.conrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    -- 'f' = foreign tables: they carry only CHECK constraints (no p/u/f/x),
    -- so the contype filter already scopes them; serialized via ALTER FOREIGN
    -- TABLE (constraintTarget keys off the parent's foreignTable kind).
    WHERE con.contype IN ('p', 'u', 'f', 'c', 'x') AND con.conislocal
      AND c.relkind IN ('r', 'p', 'f') AND ${Y}
      AND ${J("pg_class","c.oid")}
    ORDER BY n.nspname, c.relname, con.conname`))n({id:{kind:"constraint",schema:String(s.schema),table:String(s.table),name:String(s.name)},parent:{kind:String(s.table_kind)==="f"?"foreignTable":"table",schema:String(s.schema),name:String(s.table)},payload:{def:String(s.def),type:String(s.type),validated:!!s.validated}},s)}async function Ps(e){let{q:t,pushWithMeta:n}=e;for(let s of await t(`
    SELECT n.nspname AS schema, ic.relname AS name, c.relname AS table,
           c.relkind AS table_kind,
           pg_get_indexdef(i.indexrelid) AS def,
           -- A partitioned PARENT index (relkind 'I') is legitimately
           -- indisvalid=false whenever a child index is unattached, and
           -- pg_get_indexdef renders it as CREATE INDEX ... ON ONLY ..., which
           -- itself produces an invalid parent (children attach separately). So
           -- its indisvalid is attach-state, not repair-worthy corruption:
           -- force it valid here so it never drives a diff (the unmodeled
           -- attach-state stays tracked in #332). Only REGULAR indexes ('i')
           -- carry their real indisvalid, which is what catches a failed
           -- CREATE INDEX CONCURRENTLY.
           CASE WHEN ic.relkind = 'I' THEN true ELSE i.indisvalid END AS valid,
           obj_description(i.indexrelid, 'pg_class') AS comment
    FROM pg_index i
    JOIN pg_class ic ON ic.oid = i.indexrelid
    JOIN pg_class c ON c.oid = i.indrelid
    JOIN pg_namespace n ON n.oid = ic.relnamespace
    WHERE c.relkind IN ('r', 'p', 'm') AND ${Y}
      -- Exclude indexes OWNED by a constraint (PRIMARY KEY / UNIQUE / EXCLUSION),
      -- which are serialized via the constraint, not as standalone CREATE INDEX.
      -- Gate on contype: a FOREIGN KEY constraint also sets conindid — to the
      -- index on the REFERENCED table it depends on — so an unqualified check
      -- wrongly drops a standalone unique index the moment any FK references it
      -- (regression: realtime.tenants' unique index on external_id, referenced by
      -- an FK from _realtime.extensions, vanished from extraction).
      AND NOT EXISTS (
        SELECT 1 FROM pg_constraint pc
        WHERE pc.conindid = i.indexrelid AND pc.contype IN ('p', 'u', 'x')
      )
      AND NOT EXISTS (SELECT 1 FROM pg_inherits ih WHERE ih.inhrelid = i.indexrelid)
      AND ${J("pg_class","c.oid")}
    ORDER BY n.nspname, ic.relname`)){let o=String(s.table_kind)==="m"?"materializedView":"table";n({id:{kind:"index",schema:String(s.schema),name:String(s.name)},parent:{kind:o,schema:String(s.schema),name:String(s.table)},payload:{def:String(s.def),valid:!!s.valid}},s)}}async function js(e){let{q:t,pushWithMeta:n,pushMemberEdge:s,pushOwnerEdge:o}=e;for(let r of await t(`
    SELECT n.nspname AS schema, c.relname AS name, r.rolname AS owner,
           format_type(s.seqtypid, NULL) AS data_type,
           s.seqstart::text AS start, s.seqincrement::text AS increment,
           s.seqmin::text AS min_value, s.seqmax::text AS max_value,
           s.seqcache::text AS cache, s.seqcycle AS cycle,
           (SELECT json_build_object('schema', tn.nspname, 'table', tc.relname,
                                     'column', ta.attname)
            FROM pg_depend od
            JOIN pg_class tc ON tc.oid = od.refobjid
            JOIN pg_namespace tn ON tn.oid = tc.relnamespace
            JOIN pg_attribute ta ON ta.attrelid = tc.oid AND ta.attnum = od.refobjsubid
            WHERE od.classid = 'pg_class'::regclass AND od.objid = c.oid
              AND od.refclassid = 'pg_class'::regclass AND od.deptype = 'a'
              AND od.refobjsubid > 0
            LIMIT 1) AS owned_by,
           obj_description(c.oid, 'pg_class') AS comment,
           ${te("c.relacl","s","c.relowner","pg_class","c.oid")} AS acl,
           ${Z("pg_class","c.oid")} AS ext_member_of
    FROM pg_sequence s
    JOIN pg_class c ON c.oid = s.seqrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_roles r ON r.oid = c.relowner
    WHERE ${Y}
      AND NOT EXISTS (
        SELECT 1 FROM pg_depend d
        WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
          AND d.deptype = 'i')
    ORDER BY n.nspname, c.relname`)){let i={kind:"sequence",schema:String(r.schema),name:String(r.name)};n({id:i,parent:re(r.schema),payload:{dataType:String(r.data_type),start:String(r.start),increment:String(r.increment),minValue:String(r.min_value),maxValue:String(r.max_value),cache:String(r.cache),cycle:!!r.cycle,ownedBy:r.owned_by==null?null:r.owned_by}},r,z(r.acl)),s(i,r),o(i,r.owner)}}async function Fs(e){let{q:t,pushWithMeta:n,pushMemberEdge:s,pushOwnerEdge:o}=e;for(let r of await t(`
    SELECT n.nspname AS schema, c.relname AS name, r.rolname AS owner,
           c.relkind AS kind,
           pg_get_viewdef(c.oid) AS def,
           c.reloptions AS reloptions,
           obj_description(c.oid, 'pg_class') AS comment,
           ${te("c.relacl","r","c.relowner","pg_class","c.oid")} AS acl,
           ${Z("pg_class","c.oid")} AS ext_member_of
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_roles r ON r.oid = c.relowner
    WHERE c.relkind IN ('v', 'm') AND ${Y}
    ORDER BY n.nspname, c.relname`)){let i={kind:String(r.kind)==="m"?"materializedView":"view",schema:String(r.schema),name:String(r.name)};n({id:i,parent:re(r.schema),payload:{def:String(r.def),reloptions:Ds(r)}},r,z(r.acl)),s(i,r),o(i,r.owner)}}async function Us(e){let{q:t,pushWithMeta:n}=e;for(let s of await t(`
    SELECT n.nspname AS schema, c.relname AS table, t.tgname AS name,
           c.relkind AS table_kind,
           pg_get_triggerdef(t.oid) AS def,
           t.tgenabled AS enabled,
           obj_description(t.oid, 'pg_trigger') AS comment
    FROM pg_trigger t
    JOIN pg_class c ON c.oid = t.tgrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE NOT t.tgisinternal AND t.tgparentid = 0 AND ${Y}
      AND ${J("pg_class","c.oid")}
    ORDER BY n.nspname, c.relname, t.tgname`)){let o=String(s.table_kind);n({id:{kind:"trigger",schema:String(s.schema),table:String(s.table),name:String(s.name)},parent:{kind:o==="v"?"view":o==="m"?"materializedView":o==="f"?"foreignTable":"table",schema:String(s.schema),name:String(s.table)},payload:{def:String(s.def),enabled:String(s.enabled)}},s)}}async function Hs(e){let{q:t,pushWithMeta:n}=e;for(let s of await t(`
    SELECT n.nspname AS schema, c.relname AS table, c.relkind AS table_kind,
           rw.rulename AS name, pg_get_ruledef(rw.oid) AS def,
           rw.ev_enabled AS enabled,
           obj_description(rw.oid, 'pg_rewrite') AS comment
    FROM pg_rewrite rw
    JOIN pg_class c ON c.oid = rw.ev_class
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE rw.rulename <> '_RETURN' AND ${Y}
      AND ${J("pg_class","c.oid")}
    ORDER BY n.nspname, c.relname, rw.rulename`)){let o=String(s.table_kind);n({id:{kind:"rule",schema:String(s.schema),table:String(s.table),name:String(s.name)},parent:{kind:o==="v"?"view":o==="m"?"materializedView":"table",schema:String(s.schema),name:String(s.table)},payload:{def:String(s.def),enabled:String(s.enabled)}},s)}}async function Ws(e){let{q:t,facts:n}=e;for(let o of await t(`
    SELECT r.rolname AS name, r.rolsuper, r.rolinherit, r.rolcreaterole,
           r.rolcreatedb, r.rolcanlogin, r.rolreplication, r.rolbypassrls,
           COALESCE((SELECT array_agg(cfg ORDER BY cfg)
                     FROM pg_db_role_setting s, unnest(s.setconfig) cfg
                     WHERE s.setrole = r.oid AND s.setdatabase = 0),
                    '{}')::text[] AS config
    FROM pg_roles r
    WHERE r.rolname NOT LIKE 'pg\\_%'
    ORDER BY r.rolname`))n.push({id:{kind:"role",name:String(o.name)},payload:{superuser:!!o.rolsuper,inherit:!!o.rolinherit,createRole:!!o.rolcreaterole,createDb:!!o.rolcreatedb,login:!!o.rolcanlogin,replication:!!o.rolreplication,bypassRls:!!o.rolbypassrls,config:o.config.map(String)}});for(let o of await t(`
    SELECT r1.rolname AS role, r2.rolname AS member,
           bool_or(m.admin_option) AS admin
    FROM pg_auth_members m
    JOIN pg_roles r1 ON r1.oid = m.roleid
    JOIN pg_roles r2 ON r2.oid = m.member
    WHERE r1.rolname NOT LIKE 'pg\\_%' AND r2.rolname NOT LIKE 'pg\\_%'
    GROUP BY 1, 2
    ORDER BY 1, 2`))n.push({id:{kind:"membership",role:String(o.role),member:String(o.member)},payload:{admin:!!o.admin}});let s="CASE d.defaclobjtype WHEN 'S' THEN 's' ELSE d.defaclobjtype END";for(let o of await t(`
    SELECT dr.rolname AS role, n.nspname AS schema, d.defaclobjtype AS objtype,
           acl.grantee_name AS grantee, acl.privileges, acl.grantable,
           acl.revoked_default
    FROM pg_default_acl d
    JOIN pg_roles dr ON dr.oid = d.defaclrole
    LEFT JOIN pg_namespace n ON n.oid = d.defaclnamespace,
    LATERAL (
      WITH stored AS (
        SELECT e.grantee AS grantee_oid,
               COALESCE(g.rolname, 'PUBLIC') AS grantee_name,
               array_agg(e.privilege_type ORDER BY e.privilege_type) AS privileges,
               array_agg(e.privilege_type ORDER BY e.privilege_type)
                 FILTER (WHERE e.is_grantable) AS grantable
        FROM aclexplode(d.defaclacl) e
        LEFT JOIN pg_roles g ON g.oid = e.grantee
        GROUP BY 1, 2
      ),
      def AS (
        SELECT x.grantee AS grantee_oid,
               array_agg(x.privilege_type ORDER BY x.privilege_type) AS privileges
        FROM aclexplode(acldefault(${s}, d.defaclrole)) x
        GROUP BY 1
      )
      -- present grantees whose privileges DEVIATE from the built-in default
      SELECT s.grantee_name, s.privileges, s.grantable, NULL::text[] AS revoked_default
      FROM stored s
      LEFT JOIN def dd ON dd.grantee_oid = s.grantee_oid
      WHERE s.privileges IS DISTINCT FROM dd.privileges
         OR s.grantable IS NOT NULL
      UNION ALL
      -- grantees that HAVE a built-in default but are ABSENT (revoked). The
      -- grantor's OWN self-entry is a special case: its absence is a behavioral
      -- no-op in two shapes (canonicalize by never emitting a marker), but a
      -- REAL revoke in a third (emit the marker):
      --   • PER-SCHEMA row (defaclnamespace <> 0): Postgres ALWAYS re-adds the
      --     owner's acldefault entry at object-creation time → no-op.
      --   • BARE GLOBAL row with an EMPTY stored acl (the owner-revoke is the
      --     only customization): the created table's relacl degenerates to NULL
      --     and the owner keeps its privileges → no-op.
      --   • GLOBAL row that still carries OTHER grantees: Postgres uses the
      --     stored acl VERBATIM at creation, so an object made by the owner
      --     really lacks the owner's own privileges → a genuine customization
      --     that must round-trip → emit the marker.
      SELECT CASE WHEN dd.grantee_oid = 0 THEN 'PUBLIC'
                  ELSE (SELECT rolname FROM pg_roles WHERE oid = dd.grantee_oid) END,
             ARRAY[]::text[], NULL::text[], dd.privileges
      FROM def dd
      WHERE NOT EXISTS (SELECT 1 FROM stored s WHERE s.grantee_oid = dd.grantee_oid)
        AND (
          -- a non-owner absentee is always a real revoke
          dd.grantee_oid <> d.defaclrole
          -- the owner's OWN absence is a real revoke ONLY on a GLOBAL row that
          -- still carries other grantees (per-schema → owner re-merged at CREATE;
          -- bare empty global row → owner keeps privileges — both no-ops)
          OR (d.defaclnamespace = 0 AND EXISTS (SELECT 1 FROM stored s2))
        )
    ) acl
    ORDER BY 1, 2, 3, 4`)){let r=o.revoked_default??null;n.push({id:{kind:"defaultPrivilege",role:String(o.role),schema:o.schema==null?null:o.schema,objtype:String(o.objtype),grantee:String(o.grantee)},payload:{privileges:o.privileges.map(String),grantable:(o.grantable??[]).map(String),...r!=null?{_revokedDefault:r.map(String)}:{}}})}}async function Ys(e){let{q:t,pushWithMeta:n,pushMemberEdge:s,pushOwnerEdge:o}=e;for(let r of await t(`
    SELECT n.nspname AS schema, p.proname AS name, r.rolname AS owner,
           p.prokind AS prokind,
           ARRAY(SELECT format_type(t.t, NULL)
                 FROM unnest(p.proargtypes) WITH ORDINALITY AS t(t, ord)
                 ORDER BY t.ord)::text[] AS identity_args,
           pg_get_functiondef(p.oid) AS def,
           pg_get_function_result(p.oid) AS return_type,
           pg_get_function_arguments(p.oid) AS arg_signature,
           -- proconfig GUC NAMES only (name=value split in POSTGRES, never in
           -- TS): a structured, non-semantic duplicate of the routine's SET
           -- header clauses used purely for the seed replayability decision.
           (SELECT array_agg(split_part(c, '=', 1))
              FROM unnest(p.proconfig) AS c) AS config_gucs,
           l.lanname AS language,
           obj_description(p.oid, 'pg_proc') AS comment,
           ${te("p.proacl","f","p.proowner","pg_proc","p.oid")} AS acl,
           ${Z("pg_proc","p.oid")} AS ext_member_of
    FROM pg_proc p
    JOIN pg_namespace n ON n.oid = p.pronamespace
    JOIN pg_roles r ON r.oid = p.proowner
    JOIN pg_language l ON l.oid = p.prolang
    WHERE p.prokind IN ('f', 'p', 'w') AND ${Y}
      AND NOT EXISTS (
        SELECT 1 FROM pg_depend idep
        WHERE idep.classid = 'pg_proc'::regclass AND idep.objid = p.oid
          AND idep.deptype = 'i')
    ORDER BY n.nspname, p.proname`)){let i=r.identity_args.map(String),l=(r.config_gucs??[]).map(String),c={kind:String(r.prokind)==="p"?"procedure":"function",schema:String(r.schema),name:String(r.name),args:i};n({id:c,parent:re(r.schema),payload:{def:String(r.def),returnType:r.return_type==null?null:r.return_type,argSignature:String(r.arg_signature),language:String(r.language),isWindow:String(r.prokind)==="w",...l.length>0?{_configGucs:l}:{}}},r,z(r.acl)),s(c,r),o(c,r.owner)}}async function Gs(e){let{q:t,pushWithMeta:n,pushMemberEdge:s,pushOwnerEdge:o}=e;for(let r of await t(`
    SELECT n.nspname AS schema, p.proname AS name, r.rolname AS owner,
           ARRAY(SELECT format_type(t.t, NULL)
                 FROM unnest(p.proargtypes) WITH ORDINALITY AS t(t, ord)
                 ORDER BY t.ord)::text[] AS identity_args,
           a.aggkind AS agg_kind, a.aggnumdirectargs AS num_direct_args,
           a.aggtransfn::regproc::text AS sfunc,
           format_type(a.aggtranstype, NULL) AS stype,
           a.aggtransspace AS sspace,
           CASE WHEN a.aggfinalfn <> 0 THEN a.aggfinalfn::regproc::text END AS finalfunc,
           a.aggfinalextra AS finalfunc_extra,
           a.aggfinalmodify AS finalfunc_modify,
           CASE WHEN a.aggcombinefn <> 0 THEN a.aggcombinefn::regproc::text END AS combinefunc,
           CASE WHEN a.aggserialfn <> 0 THEN a.aggserialfn::regproc::text END AS serialfunc,
           CASE WHEN a.aggdeserialfn <> 0 THEN a.aggdeserialfn::regproc::text END AS deserialfunc,
           CASE WHEN a.aggmtransfn <> 0 THEN a.aggmtransfn::regproc::text END AS msfunc,
           CASE WHEN a.aggminvtransfn <> 0 THEN a.aggminvtransfn::regproc::text END AS minvfunc,
           CASE WHEN a.aggmtranstype <> 0 THEN format_type(a.aggmtranstype, NULL) END AS mstype,
           a.aggmtransspace AS msspace,
           CASE WHEN a.aggmfinalfn <> 0 THEN a.aggmfinalfn::regproc::text END AS mfinalfunc,
           a.aggmfinalextra AS mfinalfunc_extra,
           a.aggmfinalmodify AS mfinalfunc_modify,
           a.agginitval AS initcond,
           a.aggminitval AS minitcond,
           CASE WHEN a.aggsortop <> 0 THEN (
             SELECT 'OPERATOR(' || quote_ident(opn.nspname) || '.' || o.oprname || ')'
             FROM pg_operator o
             JOIN pg_namespace opn ON opn.oid = o.oprnamespace
             WHERE o.oid = a.aggsortop) END AS sortop,
           p.proparallel AS parallel,
           obj_description(p.oid, 'pg_proc') AS comment,
           ${te("p.proacl","f","p.proowner","pg_proc","p.oid")} AS acl,
           ${Z("pg_proc","p.oid")} AS ext_member_of
    FROM pg_proc p
    JOIN pg_aggregate a ON a.aggfnoid = p.oid
    JOIN pg_namespace n ON n.oid = p.pronamespace
    JOIN pg_roles r ON r.oid = p.proowner
    WHERE p.prokind = 'a' AND ${Y}
    ORDER BY n.nspname, p.proname`)){let i={kind:"aggregate",schema:String(r.schema),name:String(r.name),args:r.identity_args.map(String)};n({id:i,parent:re(r.schema),payload:{aggKind:String(r.agg_kind),numDirectArgs:Number(r.num_direct_args),sfunc:String(r.sfunc),stype:String(r.stype),sspace:Number(r.sspace),finalfunc:r.finalfunc==null?null:r.finalfunc,finalfuncExtra:!!r.finalfunc_extra,finalfuncModify:String(r.finalfunc_modify),combinefunc:r.combinefunc==null?null:r.combinefunc,serialfunc:r.serialfunc==null?null:r.serialfunc,deserialfunc:r.deserialfunc==null?null:r.deserialfunc,msfunc:r.msfunc==null?null:r.msfunc,minvfunc:r.minvfunc==null?null:r.minvfunc,mstype:r.mstype==null?null:r.mstype,msspace:Number(r.msspace),mfinalfunc:r.mfinalfunc==null?null:r.mfinalfunc,mfinalfuncExtra:!!r.mfinalfunc_extra,mfinalfuncModify:String(r.mfinalfunc_modify),initcond:r.initcond==null?null:r.initcond,minitcond:r.minitcond==null?null:r.minitcond,sortop:r.sortop==null?null:r.sortop,parallel:String(r.parallel)}},r,z(r.acl)),s(i,r),o(i,r.owner)}}async function Js(e){let{q:t,pushWithMeta:n,pushMemberEdge:s,pushOwnerEdge:o}=e;for(let r of await t(`
    SELECT n.nspname AS name, r.rolname AS owner,
           obj_description(n.oid, 'pg_namespace') AS comment,
           ${te("n.nspacl","n","n.nspowner","pg_namespace","n.oid")} AS acl,
           ${Z("pg_namespace","n.oid")} AS ext_member_of
    FROM pg_namespace n
    JOIN pg_roles r ON r.oid = n.nspowner
    WHERE ${Y}
    ORDER BY n.nspname`)){let i={kind:"schema",name:String(r.name)};n({id:i,payload:{}},r,z(r.acl)),s(i,r),o(i,r.owner)}for(let r of await t(`
    SELECT e.extname AS name, n.nspname AS schema,
           e.extrelocatable AS relocatable,
           obj_description(e.oid, 'pg_extension') AS comment
    FROM pg_extension e
    JOIN pg_namespace n ON n.oid = e.extnamespace
    WHERE e.extname <> 'plpgsql'
    ORDER BY e.extname`))n({id:{kind:"extension",name:String(r.name)},payload:{schema:String(r.schema),relocatable:!!r.relocatable}},r)}var Vs={r:"table",p:"table",v:"view",m:"materializedView",S:"sequence",f:"foreignTable"},Ks=new Set(["r","p","f"]),Go=["pg_proc","pg_namespace","pg_event_trigger","pg_publication","pg_subscription"];function zs(e){return`(${e}.typtype IN ('d', 'e', 'r')
    OR (${e}.typtype = 'c' AND EXISTS (
      SELECT 1 FROM pg_class tc WHERE tc.oid = ${e}.typrelid AND tc.relkind = 'c')))`}async function Xs(e){let{q:t,pushSeclabel:n,diagnostics:s}=e;if(!!!(await t(`SELECT EXISTS (SELECT 1 FROM pg_seclabel)
              OR EXISTS (SELECT 1 FROM pg_shseclabel) AS present`))[0]?.present)return;for(let c of await t(`
      SELECT sl.provider, sl.label, sl.objsubid,
             n.nspname AS schema, c.relname AS name, c.relkind AS relkind,
             a.attname AS column
      FROM pg_seclabel sl
      JOIN pg_class c ON c.oid = sl.objoid AND sl.classoid = 'pg_class'::regclass
      JOIN pg_namespace n ON n.oid = c.relnamespace
      LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = sl.objsubid
      WHERE ${Y}
      ORDER BY 1, 4, 5`)){let a=String(c.schema),u=String(c.relkind);if(Number(c.objsubid)>0){Ks.has(u)&&n({kind:"column",schema:a,table:String(c.name),name:String(c.column)},String(c.provider),String(c.label));continue}let d=Vs[u];d!==void 0&&n({kind:d,schema:a,name:String(c.name)},String(c.provider),String(c.label))}for(let c of await t(`
      SELECT sl.provider, sl.label, n.nspname AS schema, p.proname AS name,
             p.prokind AS prokind,
             ARRAY(SELECT format_type(t.t, NULL)
                   FROM unnest(p.proargtypes) WITH ORDINALITY AS t(t, ord)
                   ORDER BY t.ord)::text[] AS args
      FROM pg_seclabel sl
      JOIN pg_proc p ON p.oid = sl.objoid AND sl.classoid = 'pg_proc'::regclass
      JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE ${Y}
      ORDER BY 1, 3, 4`)){let a=String(c.prokind);n({kind:a==="a"?"aggregate":a==="p"?"procedure":"function",schema:String(c.schema),name:String(c.name),args:c.args.map(String)},String(c.provider),String(c.label))}for(let c of await t(`
      SELECT sl.provider, sl.label, n.nspname AS name
      FROM pg_seclabel sl
      JOIN pg_namespace n ON n.oid = sl.objoid AND sl.classoid = 'pg_namespace'::regclass
      WHERE n.nspname NOT IN ${De} AND n.nspname NOT LIKE 'pg\\_%'
      ORDER BY 1, 3`))n({kind:"schema",name:String(c.name)},String(c.provider),String(c.label));for(let c of await t(`
      SELECT sl.provider, sl.label, n.nspname AS schema, t.typname AS name,
             t.typtype AS typtype
      FROM pg_seclabel sl
      JOIN pg_type t ON t.oid = sl.objoid AND sl.classoid = 'pg_type'::regclass
      JOIN pg_namespace n ON n.oid = t.typnamespace
      WHERE ${Y} AND ${zs("t")}
      ORDER BY 1, 3, 4`))n({kind:String(c.typtype)==="d"?"domain":"type",schema:String(c.schema),name:String(c.name)},String(c.provider),String(c.label));for(let c of await t(`
      SELECT sl.provider, sl.label, e.evtname AS name
      FROM pg_seclabel sl
      JOIN pg_event_trigger e ON e.oid = sl.objoid AND sl.classoid = 'pg_event_trigger'::regclass
      WHERE ${J("pg_event_trigger","e.oid")}
      ORDER BY 1, 3`))n({kind:"eventTrigger",name:String(c.name)},String(c.provider),String(c.label));for(let c of await t(`
      SELECT sl.provider, sl.label, p.pubname AS name
      FROM pg_seclabel sl
      JOIN pg_publication p ON p.oid = sl.objoid AND sl.classoid = 'pg_publication'::regclass
      WHERE ${J("pg_publication","p.oid")}
      ORDER BY 1, 3`))n({kind:"publication",name:String(c.name)},String(c.provider),String(c.label));for(let c of await t(`
      SELECT sl.provider, sl.label, s.subname AS name
      FROM pg_seclabel sl
      JOIN pg_subscription s ON s.oid = sl.objoid AND sl.classoid = 'pg_subscription'::regclass
      ORDER BY 1, 3`))n({kind:"subscription",name:String(c.name)},String(c.provider),String(c.label));for(let c of await t(`
      SELECT sl.provider, sl.label, r.rolname AS name
      FROM pg_shseclabel sl
      JOIN pg_roles r ON r.oid = sl.objoid AND sl.classoid = 'pg_authid'::regclass
      WHERE r.rolname NOT LIKE 'pg\\_%'
      ORDER BY 1, 3`))n({kind:"role",name:String(c.name)},String(c.provider),String(c.label));let r=Go.map(c=>`'${c}'::regclass`).join(", "),i=Object.keys(Vs).map(c=>`'${c}'`).join(", "),l=[...Ks].map(c=>`'${c}'`).join(", ");for(let c of await t(`
      SELECT obj_class,
             count(*)::int AS count,
             (array_agg(descr ORDER BY descr))[1:5] AS samples
      FROM (
        SELECT sl.classoid::regclass::text AS obj_class,
               sl.classoid::regclass::text || ' #' || sl.objoid::text AS descr
        FROM pg_seclabel sl
        WHERE NOT (
          (sl.classoid = 'pg_class'::regclass AND EXISTS (
             SELECT 1 FROM pg_class c WHERE c.oid = sl.objoid AND (
               -- a column label resolves only on a column-bearing relkind; a
               -- view/matview column label is unresolved (no column fact)
               (sl.objsubid > 0 AND c.relkind IN (${l}))
               OR (sl.objsubid = 0 AND c.relkind IN (${i})))))
          -- a pg_type label resolves only for a MODELED type kind; a label on a
          -- base/shell/table-rowtype pg_type is unresolved (no type fact)
          OR (sl.classoid = 'pg_type'::regclass AND EXISTS (
             SELECT 1 FROM pg_type t WHERE t.oid = sl.objoid AND ${zs("t")}))
          OR sl.classoid IN (${r})
        )
        UNION ALL
        SELECT sl.classoid::regclass::text,
               sl.classoid::regclass::text || ' #' || sl.objoid::text
        FROM pg_shseclabel sl
        WHERE sl.classoid <> 'pg_authid'::regclass
      ) u
      GROUP BY obj_class
      ORDER BY obj_class`)){let a=Number(c.count),u=String(c.obj_class),d=c.samples??[],f=a>d.length?", …":"";s.push({code:"unresolved_security_label",severity:"warning",message:`${a} security label${a===1?"":"s"} on unmodeled target${a===1?"":"s"} (${u}) cannot be managed by this engine (e.g. ${d.join(", ")}${f}) — the label is reported, not applied`,context:{objClass:u,count:a,samples:d}})}}async function Qs(e){let{q:t,pushWithMeta:n,pushMemberEdge:s,pushOwnerEdge:o}=e;for(let r of await t(`
    SELECT n.nspname AS schema, t.typname AS name, r.rolname AS owner,
           format_type(t.typbasetype, t.typtypmod) AS base_type,
           t.typnotnull AS not_null, t.typdefault AS default_expr,
           CASE WHEN t.typcollation <> bt.typcollation THEN (
             SELECT quote_ident(cn.nspname) || '.' || quote_ident(co.collname)
             FROM pg_collation co JOIN pg_namespace cn ON cn.oid = co.collnamespace
             WHERE co.oid = t.typcollation)
           END AS collation,
           obj_description(t.oid, 'pg_type') AS comment,
           ${te("t.typacl","T","t.typowner","pg_type","t.oid")} AS acl,
           ${Z("pg_type","t.oid")} AS ext_member_of
    FROM pg_type t
    JOIN pg_namespace n ON n.oid = t.typnamespace
    JOIN pg_roles r ON r.oid = t.typowner
    JOIN pg_type bt ON bt.oid = t.typbasetype
    WHERE t.typtype = 'd' AND ${Y}
    ORDER BY n.nspname, t.typname`)){let i={kind:"domain",schema:String(r.schema),name:String(r.name)};n({id:i,parent:re(r.schema),payload:{baseType:String(r.base_type),notNull:!!r.not_null,default:r.default_expr==null?null:r.default_expr,collation:r.collation==null?null:r.collation}},r,z(r.acl)),s(i,r),o(i,r.owner)}for(let r of await t(`
    SELECT n.nspname AS schema, t.typname AS domain, con.conname AS name,
           pg_get_constraintdef(con.oid) AS def,
           con.contype AS type, con.convalidated AS validated,
           obj_description(con.oid, 'pg_constraint') AS comment
    FROM pg_constraint con
    JOIN pg_type t ON t.oid = con.contypid
    JOIN pg_namespace n ON n.oid = t.typnamespace
    WHERE con.contypid <> 0 AND ${Y}
      AND ${J("pg_type","t.oid")}
    ORDER BY n.nspname, t.typname, con.conname`))n({id:{kind:"constraint",schema:String(r.schema),table:String(r.domain),name:String(r.name)},parent:{kind:"domain",schema:String(r.schema),name:String(r.domain)},payload:{def:String(r.def),type:String(r.type),validated:!!r.validated}},r)}async function Zs(e){let{q:t,facts:n,pushWithMeta:s,pushMemberEdge:o,pushOwnerEdge:r,pgMajor:i}=e;for(let c of await t(`
    SELECT n.nspname AS schema, t.typname AS name, r.rolname AS owner,
           ARRAY(SELECT e.enumlabel::text FROM pg_enum e
                 WHERE e.enumtypid = t.oid ORDER BY e.enumsortorder) AS values,
           obj_description(t.oid, 'pg_type') AS comment,
           ${te("t.typacl","T","t.typowner","pg_type","t.oid")} AS acl,
           ${Z("pg_type","t.oid")} AS ext_member_of
    FROM pg_type t
    JOIN pg_namespace n ON n.oid = t.typnamespace
    JOIN pg_roles r ON r.oid = t.typowner
    WHERE t.typtype = 'e' AND ${Y}
    ORDER BY n.nspname, t.typname`)){let a={kind:"type",schema:String(c.schema),name:String(c.name)};s({id:a,parent:re(c.schema),payload:{variant:"enum",values:c.values.map(String)}},c,z(c.acl)),o(a,c),r(a,c.owner)}for(let c of await t(`
    SELECT n.nspname AS schema, t.typname AS name, r.rolname AS owner,
           (SELECT json_agg(json_build_object(
              'name', a.attname,
              'position', a.attnum,
              'type', format_type(a.atttypid, a.atttypmod),
              'collation', CASE WHEN a.attcollation <> at.typcollation THEN (
                SELECT quote_ident(cn.nspname) || '.' || quote_ident(co.collname)
                FROM pg_collation co JOIN pg_namespace cn ON cn.oid = co.collnamespace
                WHERE co.oid = a.attcollation) END
            ) ORDER BY a.attnum)
            FROM pg_attribute a
            JOIN pg_type at ON at.oid = a.atttypid
            WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped) AS attrs,
           obj_description(t.oid, 'pg_type') AS comment,
           ${te("t.typacl","T","t.typowner","pg_type","t.oid")} AS acl,
           ${Z("pg_type","t.oid")} AS ext_member_of
    FROM pg_type t
    JOIN pg_class tc ON tc.oid = t.typrelid AND tc.relkind = 'c'
    JOIN pg_namespace n ON n.oid = t.typnamespace
    JOIN pg_roles r ON r.oid = t.typowner
    WHERE t.typtype = 'c' AND ${Y}
    ORDER BY n.nspname, t.typname`)){let a={kind:"type",schema:String(c.schema),name:String(c.name)};s({id:a,parent:re(c.schema),payload:{variant:"composite"}},c,z(c.acl)),o(a,c),r(a,c.owner);let u=c.attrs??[];for(let d of u)n.push({id:{kind:"typeAttribute",schema:String(c.schema),type:String(c.name),name:d.name},parent:a,payload:{type:d.type,collation:d.collation??null,_position:d.position}})}let l=i>=14?`(SELECT quote_ident(mn.nspname) || '.' || quote_ident(mt.typname)
            FROM pg_type mt JOIN pg_namespace mn ON mn.oid = mt.typnamespace
            WHERE mt.oid = rng.rngmultitypid)`:"NULL::text";for(let c of await t(`
    SELECT n.nspname AS schema, t.typname AS name, r.rolname AS owner,
           format_type(rng.rngsubtype, NULL) AS subtype,
           -- pin SUBTYPE_OPCLASS only when it is not the subtype's default
           -- operator class (pg_dump's rule); the default is implied by SUBTYPE
           CASE WHEN NOT opc.opcdefault THEN
             quote_ident(opcn.nspname) || '.' || quote_ident(opc.opcname)
           END AS subtype_opclass,
           CASE WHEN rng.rngcollation <> 0 THEN (
             SELECT quote_ident(cn.nspname) || '.' || quote_ident(co.collname)
             FROM pg_collation co JOIN pg_namespace cn ON cn.oid = co.collnamespace
             WHERE co.oid = rng.rngcollation) END AS collation,
           CASE WHEN rng.rngsubdiff <> 0 THEN rng.rngsubdiff::regproc::text END AS subtype_diff,
           ${l} AS multirange_type_name,
           obj_description(t.oid, 'pg_type') AS comment,
           ${te("t.typacl","T","t.typowner","pg_type","t.oid")} AS acl,
           ${Z("pg_type","t.oid")} AS ext_member_of
    FROM pg_range rng
    JOIN pg_type t ON t.oid = rng.rngtypid
    JOIN pg_namespace n ON n.oid = t.typnamespace
    JOIN pg_roles r ON r.oid = t.typowner
    JOIN pg_opclass opc ON opc.oid = rng.rngsubopc
    JOIN pg_namespace opcn ON opcn.oid = opc.opcnamespace
    WHERE t.typtype = 'r' AND ${Y}
    ORDER BY n.nspname, t.typname`)){let a={kind:"type",schema:String(c.schema),name:String(c.name)};s({id:a,parent:re(c.schema),payload:{variant:"range",subtype:String(c.subtype),subtypeOpclass:c.subtype_opclass==null?null:c.subtype_opclass,collation:c.collation==null?null:c.collation,subtypeDiff:c.subtype_diff==null?null:c.subtype_diff,multirangeTypeName:c.multirange_type_name==null?null:c.multirange_type_name}},c,z(c.acl)),o(a,c),r(a,c.owner)}}async function er(e){let{q:t,pushWithMeta:n,pushMemberEdge:s,pushOwnerEdge:o}=e;for(let r of await t(`
    SELECT n.nspname AS schema, c.collname AS name, r.rolname AS owner,
           c.collprovider AS provider, c.collisdeterministic AS deterministic,
           to_jsonb(c) AS raw,
           obj_description(c.oid, 'pg_collation') AS comment,
           ${Z("pg_collation","c.oid")} AS ext_member_of
    FROM pg_collation c
    JOIN pg_namespace n ON n.oid = c.collnamespace
    JOIN pg_roles r ON r.oid = c.collowner
    WHERE ${Y}
    ORDER BY n.nspname, c.collname`)){let i=r.raw,l=i.colllocale??i.colliculocale??null,c={kind:"collation",schema:String(r.schema),name:String(r.name)};n({id:c,parent:re(r.schema),payload:{provider:String(r.provider),deterministic:!!r.deterministic,locale:l,lcCollate:i.collcollate??null,lcCtype:i.collctype??null}},r),s(c,r),o(c,r.owner)}}function Jo(e,t){return`EXISTS (SELECT 1 FROM pg_depend de
    WHERE de.classid = '${e}'::regclass
      AND de.objid = ${t} AND de.deptype = 'e')`}function Vo(e,t){return`EXISTS (SELECT 1 FROM pg_depend idep
    WHERE idep.classid = '${e}'::regclass
      AND idep.objid = ${t} AND idep.deptype = 'i')`}var Ko=[{kind:"cast",classid:"pg_cast",oid:"c.oid",name:"format_type(c.castsource, NULL) || ' AS ' || format_type(c.casttarget, NULL)",from:"pg_cast c"},{kind:"operator",classid:"pg_operator",oid:"o.oid",name:"o.oprname",from:"pg_operator o"},{kind:"operator class",classid:"pg_opclass",oid:"opc.oid",name:"opc.opcname",from:"pg_opclass opc"},{kind:"operator family",classid:"pg_opfamily",oid:"opf.oid",name:"opf.opfname",from:"pg_opfamily opf"},{kind:"text search configuration",classid:"pg_ts_config",oid:"tc.oid",name:"tc.cfgname",from:"pg_ts_config tc"},{kind:"text search dictionary",classid:"pg_ts_dict",oid:"td.oid",name:"td.dictname",from:"pg_ts_dict td"},{kind:"text search parser",classid:"pg_ts_parser",oid:"tp.oid",name:"tp.prsname",from:"pg_ts_parser tp"},{kind:"text search template",classid:"pg_ts_template",oid:"tt.oid",name:"tt.tmplname",from:"pg_ts_template tt"},{kind:"statistics object",classid:"pg_statistic_ext",oid:"se.oid",name:"se.stxname",from:"pg_statistic_ext se"},{kind:"language",classid:"pg_language",oid:"l.oid",name:"l.lanname",from:"pg_language l",where:"l.lanispl"},{kind:"transform",classid:"pg_transform",oid:"tr.oid",name:"format_type(tr.trftype, NULL) || ' / ' || (SELECT ll.lanname FROM pg_language ll WHERE ll.oid = tr.trflang)",from:"pg_transform tr"},{kind:"parameter ACL",classid:"pg_parameter_acl",oid:"pa.oid",name:"pa.parname",from:"pg_parameter_acl pa",minVersion:15}];function zo(e){let t=[e.where,`${e.oid} >= 16384`,`NOT ${Jo(e.classid,e.oid)}`,`NOT ${Vo(e.classid,e.oid)}`].filter(Boolean);return`SELECT '${e.kind}'::text AS kind,
            count(*)::int AS count,
            (array_agg(nm ORDER BY nm))[1:5] AS samples
     FROM (
       SELECT ${e.name} AS nm
       FROM ${e.from}
       WHERE ${t.join(" AND ")}
     ) s`}async function tr(e,t){let s=Ko.filter(i=>i.minVersion===void 0||t>=i.minVersion).map(zo).join(`
UNION ALL
`),{rows:o}=await e.query(s),r=[];for(let i of o){if(i.count<=0)continue;let l=i.samples??[],c=i.count>l.length?", …":"";r.push({code:"unmodeled_kind",severity:"warning",message:`${i.count} unmodeled "${i.kind}" object${i.count===1?"":"s"} not managed by this engine (e.g. ${l.join(", ")}${c}) — v1 detects but does not model this kind`,context:{kind:i.kind,count:i.count,samples:l}})}return r}async function lt(e,t={}){let n=await e.connect();try{await n.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"),await n.query("SET LOCAL search_path TO 'pg_catalog'"),t.statementTimeoutMs!==void 0&&await n.query(`SET LOCAL statement_timeout = ${Math.max(0,Math.floor(t.statementTimeoutMs))}`);let s=await Xo(n,t.source??"liveDb",t.statementTimeoutMs,t.handlers??[],t.redactSecrets??!0);return await n.query("COMMIT"),s}catch(s){throw await n.query("ROLLBACK").catch(()=>{}),s}finally{n.release()}}async function Xo(e,t,n,s,o){let r=await Rs(e,n,o);await e.query(r.pgMajor>=15?"SELECT set_config('jit', 'off', true) WHERE has_parameter_privilege(current_user, 'jit', 'SET')":"SET LOCAL jit = off"),o||r.diagnostics.push({code:"secret-redaction-disabled",severity:"warning",message:"Secret redaction is DISABLED: foreign-data option values and subscription conninfo are emitted in cleartext in plan SQL, the catalog snapshot, declarative export, and the plan artifact. Do not persist these artifacts to untrusted locations."});let i=r.serverVersion;await Ws(r),await Js(r),await Ms(r),await Bs(r),await qs(r),await Ps(r),await js(r),await Fs(r),await Ys(r),await Us(r),await ks(r),await Qs(r),await Zs(r),await er(r),await Is(r),await Hs(r),await Gs(r),await Cs(r),await xs(r),await vs(r),await Xs(r),await ws(r),await Ts(r);let l=Ns(r.facts);r.diagnostics.push(...l.diagnostics);let c=Q(l.facts,r.edges,t);if(s.length>0){let a={query:r.q},u=[],d=[],f=[];for(let m of s){let E=await m.capture(a,c);u.push(...E.facts),d.push(...E.edges),E.diagnostics&&f.push(...E.diagnostics)}(u.length>0||d.length>0)&&(c=Q([...c.facts(),...u],[...c.edges,...d],t)),c.diagnostics.push(...f)}return c.diagnostics.push(...r.factDiagnostics),r.diagnostics.push(...c.diagnostics),r.diagnostics.push(...await tr(e,r.pgMajor)),{factBase:c,pgVersion:i,diagnostics:r.diagnostics}}function Mt(e){return`${p(e.from)}|${e.kind}|${p(e.to)}`}function Me(e,t){let n=[],s=a=>{let u=p(a);return e.referenceOnly.has(u)||t.referenceOnly.has(u)},o=(a,u,d)=>{if(!s(u.id)){n.push(d==="add"?{verb:d,fact:u}:{verb:d,fact:u});for(let f of a.outgoingEdges(u.id))n.push(d==="add"?{verb:"link",edge:f}:{verb:"unlink",edge:f})}for(let f of a.childrenOf(u.id))o(a,f,d)},r=a=>{if(s(a))return;let u=e.get(a),d=t.get(a);if(u&&d){if(e.hashOf(a)!==t.hashOf(a)){let E=new Set([...Object.keys(u.payload),...Object.keys(d.payload)]);for(let O of[...E].sort()){if(O.startsWith("_"))continue;let A=u.payload[O],w=d.payload[O],N=A===void 0?" absent":ye(A),L=w===void 0?" absent":ye(w);N!==L&&n.push({verb:"set",id:a,attr:O,from:A,to:w})}}let f=new Map(e.outgoingEdges(a).map(E=>[Mt(E),E])),m=new Map(t.outgoingEdges(a).map(E=>[Mt(E),E]));for(let[E,O]of f)m.has(E)||n.push({verb:"unlink",edge:O});for(let[E,O]of m)f.has(E)||n.push({verb:"link",edge:O})}},i=a=>{let u=e.has(a),d=t.has(a);if(u&&d&&e.rollupOf(a)===t.rollupOf(a))return;if(u&&!d){o(e,e.get(a),"remove");return}if(!u&&d){o(t,t.get(a),"add");return}r(a);let f=new Map;if(u)for(let m of e.childrenOf(a))f.set(p(m.id),m.id);if(d)for(let m of t.childrenOf(a))f.set(p(m.id),m.id);for(let m of f.values())i(m)},l=new Map;for(let a of e.roots())l.set(p(a.id),a.id);for(let a of t.roots())l.set(p(a.id),a.id);for(let a of l.values())i(a);let c=n.map(a=>({key:Qo(a),delta:a}));return c.sort((a,u)=>a.key<u.key?-1:a.key>u.key?1:0),c.map(a=>a.delta)}function Be(e){switch(e.verb){case"add":case"remove":return e.fact.id;case"set":return e.id;case"link":case"unlink":return e.edge.from}}function Qo(e){let t=e.verb==="set"?e.attr:e.verb==="link"||e.verb==="unlink"?Mt(e.edge):"";return`${p(Be(e))}|${e.verb}|${t}`}function g(e){return`"${e.replaceAll('"','""')}"`}function q(e){return`'${e.replaceAll("'","''")}'`}function y(e,t){return`${g(e)}.${g(t)}`}function he(e){return`${y(e.schema,e.name)}(${e.args.join(", ")})`}function _e(e,t){switch(e.kind){case"schema":return`SCHEMA ${g(e.name)}`;case"table":return`TABLE ${y(e.schema,e.name)}`;case"view":return`VIEW ${y(e.schema,e.name)}`;case"materializedView":return`MATERIALIZED VIEW ${y(e.schema,e.name)}`;case"sequence":return`SEQUENCE ${y(e.schema,e.name)}`;case"index":return`INDEX ${y(e.schema,e.name)}`;case"column":return`COLUMN ${y(e.schema,e.table)}.${g(e.name)}`;case"constraint":return t?.domainConstraint?`CONSTRAINT ${g(e.name)} ON DOMAIN ${y(e.schema,e.table)}`:`CONSTRAINT ${g(e.name)} ON ${y(e.schema,e.table)}`;case"trigger":return`TRIGGER ${g(e.name)} ON ${y(e.schema,e.table)}`;case"policy":return`POLICY ${g(e.name)} ON ${y(e.schema,e.table)}`;case"function":return`FUNCTION ${he(e)}`;case"procedure":return`PROCEDURE ${he(e)}`;case"aggregate":return`AGGREGATE ${y(e.schema,e.name)}(${t?.aggregateSignature??(e.args.length>0?e.args.join(", "):"*")})`;case"extension":return`EXTENSION ${g(e.name)}`;case"role":return`ROLE ${g(e.name)}`;case"domain":return`DOMAIN ${y(e.schema,e.name)}`;case"type":return`TYPE ${y(e.schema,e.name)}`;case"collation":return`COLLATION ${y(e.schema,e.name)}`;case"foreignTable":return`FOREIGN TABLE ${y(e.schema,e.name)}`;case"rule":return`RULE ${g(e.name)} ON ${y(e.schema,e.table)}`;case"eventTrigger":return`EVENT TRIGGER ${g(e.name)}`;case"publication":return`PUBLICATION ${g(e.name)}`;case"subscription":return`SUBSCRIPTION ${g(e.name)}`;case"fdw":return`FOREIGN DATA WRAPPER ${g(e.name)}`;case"server":return`SERVER ${g(e.name)}`;default:throw new Error(`commentTarget: unsupported kind ${e.kind}`)}}function Oe(e){switch(e.kind){case"table":case"view":case"materializedView":return`TABLE ${y(e.schema,e.name)}`;case"sequence":return`SEQUENCE ${y(e.schema,e.name)}`;case"schema":return`SCHEMA ${g(e.name)}`;case"procedure":return`PROCEDURE ${he(e)}`;case"function":case"aggregate":return`FUNCTION ${he(e)}`;case"domain":case"type":return`TYPE ${y(e.schema,e.name)}`;case"foreignTable":return`TABLE ${y(e.schema,e.name)}`;case"fdw":return`FOREIGN DATA WRAPPER ${g(e.name)}`;case"server":return`FOREIGN SERVER ${g(e.name)}`;default:throw new Error(`grantTarget: unsupported kind ${e.kind}`)}}function de(e){let t=e.indexOf("=");return t===-1?[e,""]:[e.slice(0,t),e.slice(t+1)]}function qe(e){return e.length===0?"":` OPTIONS (${e.map(n=>{let[s,o]=de(n);return`${g(s)} ${q(o)}`}).join(", ")})`}function Pe(e,t){let n=new Map(e.map(de)),s=new Map(t.map(de)),o=[];for(let[r,i]of s)n.has(r)?n.get(r)!==i&&o.push(`SET ${g(r)} ${q(i)}`):o.push(`ADD ${g(r)} ${q(i)}`);for(let r of n.keys())s.has(r)||o.push(`DROP ${g(r)}`);return`OPTIONS (${o.join(", ")})`}var Zo=new TextEncoder;function Fe(e){return Zo.encode(e).length}function nr(e,t){if(t<=0)return"";if(Fe(e)<=t)return e;let n="",s=0;for(let o of e){let r=Fe(o);if(s+r>t)break;n+=o,s+=r}return n}function X(e){return(t,n)=>({sql:`${e(t)} RENAME TO ${g(n.name)}`})}var S=e=>{if(e==null||typeof e=="object")throw new Error(`rule rendering: expected a scalar, got ${JSON.stringify(e)}`);return String(e)};function h(e,t){return e.payload[t]}function Ee(e,t){return e.outgoingEdges(t).filter(n=>n.kind==="depends").map(n=>n.to)}function qt(e){let t=h(e,"reloptions");return t!=null&&t.length>0?` WITH (${t.join(", ")})`:""}function He(e,t,n){let s=new Map(t?.map(de)??[]),o=new Map(n?.map(de)??[]),r=[];for(let[c,a]of o)s.get(c)!==a&&r.push(`${c}=${a}`);let i=[];for(let c of s.keys())o.has(c)||i.push(c);let l=[];return r.length>0&&l.push({sql:`${e} SET (${r.join(", ")})`}),i.length>0&&l.push({sql:`${e} RESET (${i.join(", ")})`}),l}function Pt(e,t){let n=0;for(let s of t)n<e.length&&s===e[n]&&n++;return n===e.length}var jt={superuser:["SUPERUSER","NOSUPERUSER"],inherit:["INHERIT","NOINHERIT"],createRole:["CREATEROLE","NOCREATEROLE"],createDb:["CREATEDB","NOCREATEDB"],login:["LOGIN","NOLOGIN"],replication:["REPLICATION","NOREPLICATION"],bypassRls:["BYPASSRLS","NOBYPASSRLS"]};function sr(e){return Object.entries(jt).map(([t,[n,s]])=>e[t]?n:s).join(" ")}function We(e){return e==null?null:e.generation}function Ft(e){if(e==null)return null;let t=e.sequence;return t==null?null:{kind:"sequence",schema:t.schema,name:t.name}}function Ne(e){return e==null?null:e.options??null}var Bt={smallint:"32767",integer:"2147483647",bigint:"9223372036854775807"};function rr(e,t){let n=Bt[e],s=Bt[t];return n===void 0||s===void 0?!1:BigInt(s)<BigInt(n)}function ei(e,t){return e.increment==="1"&&e.start==="1"&&e.minValue==="1"&&e.cache==="1"&&e.cycle===!1&&e.maxValue===Bt[t]}function ti(e,t){return`${e}_${t}_seq`}function Ut(e,t){if(e==null)return"";let n=e.sequence;return n==null||n.schema===t.schema&&n.name===ti(t.table,t.column)?"":`SEQUENCE NAME ${y(n.schema,n.name)}`}function Ht(e,t,n=""){let s=[];return n&&s.push(n),e!=null&&!ei(e,t)&&s.push(`INCREMENT BY ${e.increment}`,`MINVALUE ${e.minValue}`,`MAXVALUE ${e.maxValue}`,`START WITH ${e.start}`,`CACHE ${e.cache}`,e.cycle?"CYCLE":"NO CYCLE"),s.length===0?"":` (${s.join(" ")})`}function or(e,t,n,s){return BigInt(t)<BigInt(n)||BigInt(e)>BigInt(s)}function Wt(e,t,n){if(n==null)return[];let s=[];return(t==null||t.increment!==n.increment)&&s.push(`SET INCREMENT BY ${n.increment}`),(t==null||t.minValue!==n.minValue)&&s.push(`SET MINVALUE ${n.minValue}`),(t==null||t.maxValue!==n.maxValue)&&s.push(`SET MAXVALUE ${n.maxValue}`),(t==null||t.start!==n.start)&&s.push(`SET START WITH ${n.start}`),(t==null||t.cache!==n.cache)&&s.push(`SET CACHE ${n.cache}`),(t==null||t.cycle!==n.cycle)&&s.push(`SET ${n.cycle?"CYCLE":"NO CYCLE"}`),s.length===0?[]:(t!=null&&or(t.minValue,t.maxValue,n.minValue,n.maxValue)&&s.push("RESTART"),[{sql:`${e} ${s.join(" ")}`}])}var ni=["dataType","increment","minValue","maxValue","start","cache","cycle"];function si(e,t){switch(t){case"dataType":return`AS ${S(h(e,"dataType"))}`;case"increment":return`INCREMENT BY ${S(h(e,"increment"))}`;case"minValue":return`MINVALUE ${S(h(e,"minValue"))}`;case"maxValue":return`MAXVALUE ${S(h(e,"maxValue"))}`;case"start":return`START WITH ${S(h(e,"start"))}`;case"cache":return`CACHE ${S(h(e,"cache"))}`;case"cycle":return h(e,"cycle")?"CYCLE":"NO CYCLE";default:throw new Error(`sequence rule: unknown value option '${t}'`)}}function be(e,t,n){let s=n.get(t.id),o=ni.filter(c=>s===void 0||s.payload[c]!==t.payload[c]);if(o.length===0)return[];let[r]=[...o].sort();if(e!==r)return[];let i=t.id,l=o.map(c=>si(t,c));return s!==void 0&&or(S(s.payload.minValue),S(s.payload.maxValue),S(h(t,"minValue")),S(h(t,"maxValue")))&&l.push("RESTART"),[{sql:`ALTER SEQUENCE ${y(i.schema,i.name)} ${l.join(" ")}`}]}function ie(e){let t=e.id;return{schema:t.schema,table:t.table,column:t.name}}function Yt(e){let{column:t}=ie(e),n=S(h(e,"type")),s=`${g(t)} ${n}`,o=h(e,"collation");o!=null&&(s+=` COLLATE ${S(o)}`);let r=h(e,"generatedExpr");r!=null&&(s+=` GENERATED ALWAYS AS (${S(r)}) STORED`);let i=h(e,"identity"),l=We(i);return(l==="a"||l==="d")&&(s+=` GENERATED ${l==="a"?"ALWAYS":"BY DEFAULT"} AS IDENTITY`,s+=Ht(Ne(i),n,Ut(i,ie(e)))),h(e,"notNull")&&(s+=" NOT NULL"),s}var ri={r:"SELECT",a:"INSERT",w:"UPDATE",d:"DELETE","*":"ALL"};function ir(e){let t=e.id,n=h(e,"roles").map(i=>i==="PUBLIC"?"PUBLIC":g(i)),s=`CREATE POLICY ${g(t.name)} ON ${y(t.schema,t.table)}`;h(e,"permissive")||(s+=" AS RESTRICTIVE"),s+=` FOR ${ri[S(h(e,"cmd"))]??"ALL"}`,s+=` TO ${n.join(", ")}`;let o=h(e,"usingExpr");o!=null&&(s+=` USING (${S(o)})`);let r=h(e,"checkExpr");return r!=null&&(s+=` WITH CHECK (${S(r)})`),s}function Gt(e,t={}){let n=e.id,s=t.releaseOld,o=s!=null?[{kind:"column",schema:s.schema,table:s.table,name:s.column}]:[],r=h(e,"ownedBy");return r==null?t.allowNone?[{sql:`ALTER SEQUENCE ${y(n.schema,n.name)} OWNED BY NONE`,...o.length>0?{releases:o}:{}}]:[]:[{sql:`ALTER SEQUENCE ${y(n.schema,n.name)} OWNED BY ${y(r.schema,r.table)}.${g(r.column)}`,consumes:[{kind:"column",schema:r.schema,table:r.table,name:r.column}],...o.length>0?{releases:o}:{}}]}function Ye(e){let t=e.id;return`ALTER ${e.parent?.kind==="domain"?"DOMAIN":e.parent?.kind==="foreignTable"?"FOREIGN TABLE":"TABLE"} ${y(t.schema,t.table)}`}function Jt(e){let t=e.id.name,n=h(e,"collation");return`${g(t)} ${S(h(e,"type"))}${n!=null?` COLLATE ${S(n)}`:""}`}function dt(e,t){let n=p(t);return e.edges.filter(s=>s.from.kind==="column"&&p(s.to)===n).map(s=>s.from).filter(s=>e.get(s)!==void 0)}function Se(e){switch(e){case"D":return"DISABLE";case"R":return"ENABLE REPLICA";case"A":return"ENABLE ALWAYS";default:return"ENABLE"}}function ut(e,t){let n=e.id,s=S(h(e,"replicaIdentity")??"d"),o=y(n.schema,n.name);if(s==="n")return{sql:`ALTER TABLE ${o} REPLICA IDENTITY NOTHING`};if(s==="f")return{sql:`ALTER TABLE ${o} REPLICA IDENTITY FULL`};if(s==="i"){let r=S(h(e,"replicaIdentityIndex")),i=[],l=t.childrenOf(e.id).find(c=>c.id.kind==="constraint"&&c.id.name===r);return l?i.push(l.id):i.push({kind:"index",schema:n.schema,name:r}),{sql:`ALTER TABLE ${o} REPLICA IDENTITY USING INDEX ${g(r)}`,consumes:i}}return{sql:`ALTER TABLE ${o} REPLICA IDENTITY DEFAULT`}}function Ue(e,t,n,s){let o=s?.column,r=o===void 0?t.join(", "):t.map(c=>`${c} (${g(o)})`).join(", "),i=n.map(c=>c==="PUBLIC"?"PUBLIC":g(c)).join(", "),l=s?.withGrantOption?" WITH GRANT OPTION":"";return`GRANT ${r} ON ${Oe(e)} TO ${i}${l}`}function Vt(e,t){let n=e.id,s=n.grantee==="PUBLIC"?"PUBLIC":g(n.grantee),o=h(e,"privileges"),r=new Set(h(e,"grantable")??[]),i=o.filter(f=>!r.has(f)),l=o.filter(f=>r.has(f)),c=n.grantee==="PUBLIC"?[]:[{kind:"role",name:n.grantee}],a=n.column,d=[{sql:`${a===void 0?"REVOKE ALL":`REVOKE ALL (${g(a)})`} ON ${Oe(n.target)} FROM ${s}`,consumes:c}];return i.length>0&&d.push({sql:Ue(n.target,i,[n.grantee],a!==void 0?{column:a}:{}),consumes:c}),l.length>0&&d.push({sql:Ue(n.target,l,[n.grantee],{...a!==void 0?{column:a}:{},withGrantOption:!0}),consumes:c}),d}function Le(e){let t=e.id.args,n=S(h(e,"aggKind")??"n");if(n==="o"||n==="h"){let s=Number(h(e,"numDirectArgs")??0);return`${t.slice(0,s).join(", ")} ORDER BY ${t.slice(s).join(", ")}`}return t.length>0?t.join(", "):"*"}var oi={r:"TABLES",S:"SEQUENCES",f:"FUNCTIONS",T:"TYPES",n:"SCHEMAS",L:"LARGE OBJECTS"};function ar(e){let t=oi[e];if(t===void 0)throw new Error(`defaultPrivilege: unmapped pg_default_acl.defaclobjtype "${e}" — add it to DEFACL_OBJTYPE (helpers.ts)`);return t}function je(e){let t=`ALTER DEFAULT PRIVILEGES FOR ROLE ${g(e.role)}`;return e.schema!=null&&(t+=` IN SCHEMA ${g(e.schema)}`),t}function cr(e){let t=[{kind:"role",name:e.role}];return e.grantee!=="PUBLIC"&&t.push({kind:"role",name:e.grantee}),e.schema!=null&&t.push({kind:"schema",name:e.schema}),t}function lr(e){return(h(e,"privileges")??[]).length===0}function dr(e){let t=e.id,n=t.grantee==="PUBLIC"?"PUBLIC":g(t.grantee),s=ar(t.objtype),o=cr(t);if(lr(e))return[{sql:`${je(t)} REVOKE ALL ON ${s} FROM ${n}`,consumes:o}];let r=h(e,"privileges")??[],i=new Set(h(e,"grantable")??[]),l=r.filter(u=>!i.has(u)),c=r.filter(u=>i.has(u)),a=[];return l.length>0&&a.push({sql:`${je(t)} GRANT ${l.join(", ")} ON ${s} TO ${n}`,consumes:o}),c.length>0&&a.push({sql:`${je(t)} GRANT ${c.join(", ")} ON ${s} TO ${n} WITH GRANT OPTION`,consumes:o}),a}function ur(e){let t=e.id,n=t.grantee==="PUBLIC"?"PUBLIC":g(t.grantee),s=ar(t.objtype),o=cr(t);if(lr(e)){let r=h(e,"_revokedDefault")??[];return{sql:`${je(t)} GRANT ${r.join(", ")} ON ${s} TO ${n}`,consumes:o}}return{sql:`${je(t)} REVOKE ALL ON ${s} FROM ${n}`,consumes:o}}function pr(e){let t=e.id,n=y(t.schema,t.table),s=h(e,"columns");s!=null&&s.length>0&&(n+=` (${s.map(r=>g(r)).join(", ")})`);let o=h(e,"where");return o!=null&&(n+=` WHERE (${S(o)})`),n}function fr(e){return`TABLE ${pr(e)}`}function mr(e,t){let n=[],s=[],o=[],r=[];for(let l of t.childrenOf(e.id))if(l.id.kind==="publicationRel"){let c=l.id;n.push(pr(l)),o.push({kind:"table",schema:c.schema,name:c.table}),r.push(l.id)}else if(l.id.kind==="publicationSchema"){let c=l.id;s.push(g(c.schema)),o.push({kind:"schema",name:c.schema}),r.push(l.id)}let i=[];return n.length>0&&i.push(`TABLE ${n.join(", ")}`),s.length>0&&i.push(`TABLES IN SCHEMA ${s.join(", ")}`),{clauses:i,consumes:o,produced:r}}var gr={constraint:{weight:10,cascadesToChildren:!0,rebuildable:!0,suppressible:e=>e.payload.type!=="f",rename:(e,t)=>{let n=e.id;return{sql:`${Ye(e)} RENAME CONSTRAINT ${g(n.name)} TO ${g(t.name)}`}},create:e=>{let t=e.id,s=`${Ye(e)} ADD CONSTRAINT ${g(t.name)} ${S(h(e,"def"))}`;!h(e,"validated")&&!S(h(e,"def")).includes("NOT VALID")&&(s+=" NOT VALID");let o=S(h(e,"type")),r=h(e,"validated")===!0&&e.parent?.kind==="table"?{compaction:{foldInto:e.parent,clause:`CONSTRAINT ${g(t.name)} ${S(h(e,"def"))}`,...o==="p"||o==="u"||o==="c"?{executorSafe:!0}:{}}}:{};return[{sql:s,...h(e,"type")==="f"?{lockClass:"shareRowExclusive"}:{},...r}]},drop:e=>{let t=e.id;return{sql:`${Ye(e)} DROP CONSTRAINT ${g(t.name)}`}},attributes:{def:"replace",type:"replace",validated:{alter:(e,t,n)=>{let s=e.id,o=Ye(e);if(!n){let r=S(h(e,"def")),i=r.includes("NOT VALID")?r:`${r} NOT VALID`;return[{sql:`${o} DROP CONSTRAINT ${g(s.name)}`},{sql:`${o} ADD CONSTRAINT ${g(s.name)} ${i}`,...h(e,"type")==="f"?{lockClass:"shareRowExclusive"}:{}}]}return{sql:`${o} VALIDATE CONSTRAINT ${g(s.name)}`,lockClass:"shareUpdateExclusive"}}}}}};var hr={fdw:{weight:2,create:e=>{let n=`CREATE FOREIGN DATA WRAPPER ${g(e.id.name)}`,s=h(e,"handler");s!=null&&(n+=` HANDLER ${S(s)}`);let o=h(e,"validator");return o!=null&&(n+=` VALIDATOR ${S(o)}`),n+=qe(h(e,"options")??[]),[{sql:n}]},drop:e=>({sql:`DROP FOREIGN DATA WRAPPER ${g(e.id.name)}`}),ownerAlterPrefix:e=>`ALTER FOREIGN DATA WRAPPER ${g(e.id.name)}`,attributes:{options:{alter:(e,t,n)=>({sql:`ALTER FOREIGN DATA WRAPPER ${g(e.id.name)} ${Pe(t??[],n??[])}`})},handler:{alter:(e,t,n)=>({sql:`ALTER FOREIGN DATA WRAPPER ${g(e.id.name)} ${n==null?"NO HANDLER":`HANDLER ${S(n)}`}`})},validator:{alter:(e,t,n)=>({sql:`ALTER FOREIGN DATA WRAPPER ${g(e.id.name)} ${n==null?"NO VALIDATOR":`VALIDATOR ${S(n)}`}`})}}},server:{weight:3,create:e=>{let n=`CREATE SERVER ${g(e.id.name)}`,s=h(e,"type");s!=null&&(n+=` TYPE ${q(S(s))}`);let o=h(e,"version");return o!=null&&(n+=` VERSION ${q(S(o))}`),n+=` FOREIGN DATA WRAPPER ${g(S(h(e,"fdw")))}`,n+=qe(h(e,"options")??[]),[{sql:n}]},drop:e=>({sql:`DROP SERVER ${g(e.id.name)}`}),ownerAlterPrefix:e=>`ALTER SERVER ${g(e.id.name)}`,attributes:{version:{alter:(e,t,n)=>({sql:`ALTER SERVER ${g(e.id.name)} VERSION ${q(S(n))}`}),replaceWhen:(e,t)=>t==null},options:{alter:(e,t,n)=>({sql:`ALTER SERVER ${g(e.id.name)} ${Pe(t??[],n??[])}`})},type:"replace",fdw:"replace"}},userMapping:{weight:4,create:e=>{let t=e.id;return[{sql:`CREATE USER MAPPING FOR ${t.role==="PUBLIC"?"PUBLIC":g(t.role)} SERVER ${g(t.server)}${qe(h(e,"options")??[])}`,...t.role==="PUBLIC"?{}:{consumes:[{kind:"role",name:t.role}]}}]},drop:e=>{let t=e.id;return{sql:`DROP USER MAPPING FOR ${t.role==="PUBLIC"?"PUBLIC":g(t.role)} SERVER ${g(t.server)}`,...t.role==="PUBLIC"?{}:{consumes:[{kind:"role",name:t.role}]}}},attributes:{options:{alter:(e,t,n)=>{let s=e.id;return{sql:`ALTER USER MAPPING FOR ${s.role==="PUBLIC"?"PUBLIC":g(s.role)} SERVER ${g(s.server)} ${Pe(t??[],n??[])}`,...s.role==="PUBLIC"?{}:{consumes:[{kind:"role",name:s.role}]}}}}}},foreignTable:{weight:5,cascadesToChildren:!0,defaclObjtype:"r",rename:X(e=>{let t=e.id;return`ALTER FOREIGN TABLE ${y(t.schema,t.name)}`}),create:e=>{let t=e.id;return[{sql:`CREATE FOREIGN TABLE ${y(t.schema,t.name)} () SERVER ${g(S(h(e,"server")))}${qe(h(e,"options")??[])}`}]},drop:e=>{let t=e.id;return{sql:`DROP FOREIGN TABLE ${y(t.schema,t.name)}`}},ownerAlterPrefix:e=>{let t=e.id;return`ALTER FOREIGN TABLE ${y(t.schema,t.name)}`},attributes:{options:{alter:(e,t,n)=>{let s=e.id;return{sql:`ALTER FOREIGN TABLE ${y(s.schema,s.name)} ${Pe(t??[],n??[])}`}}},server:"replace"}}};var Er={index:{weight:14,cascadesToChildren:!0,rebuildable:!0,rename:X(e=>{let t=e.id;return`ALTER INDEX ${y(t.schema,t.name)}`}),create:(e,t,n)=>{let s=S(h(e,"def")),o=e.parent?.kind==="table"?t.get(e.parent):void 0,r=o!=null&&h(o,"partitionKey")!=null;return n?.concurrentIndexes===!0&&!r?[{sql:s.replace(/^CREATE (UNIQUE )?INDEX /,"CREATE $1INDEX CONCURRENTLY "),lockClass:"shareUpdateExclusive",transactionality:"nonTransactional"}]:[{sql:s}]},drop:e=>{let t=e.id;return{sql:`DROP INDEX ${y(t.schema,t.name)}`}},attributes:{def:"replace",valid:"replace"}}};function $e(e,...t){if(e.kind==="aggregate")for(let n of t){let s=n?.get(e);if(s!==void 0)return Le(s)}}var br={comment:{weight:20,metadata:!0,create:(e,t,n,s)=>{let o=e.id.target,r={domainConstraint:h(e,"onDomain")===!0,aggregateSignature:$e(o,t,s)};return[{sql:`COMMENT ON ${_e(o,r)} IS ${q(S(h(e,"text")))}`}]},drop:(e,t)=>{let n=e.id.target,s={domainConstraint:h(e,"onDomain")===!0,aggregateSignature:$e(n,t)};return{sql:`COMMENT ON ${_e(n,s)} IS NULL`}},attributes:{text:{alter:(e,t,n,s,o)=>{let r=e.id.target,i={domainConstraint:h(e,"onDomain")===!0,aggregateSignature:$e(r,s,o)};return{sql:`COMMENT ON ${_e(r,i)} IS ${q(S(n))}`}}}}},securityLabel:{weight:20,metadata:!0,create:(e,t,n,s)=>{let o=e.id,r={aggregateSignature:$e(o.target,t,s)};return[{sql:`SECURITY LABEL FOR ${q(o.provider)} ON ${_e(o.target,r)} IS ${q(S(h(e,"label")))}`}]},drop:(e,t)=>{let n=e.id,s={aggregateSignature:$e(n.target,t)};return{sql:`SECURITY LABEL FOR ${q(n.provider)} ON ${_e(n.target,s)} IS NULL`}},attributes:{label:{alter:(e,t,n,s,o)=>{let r=e.id,i={aggregateSignature:$e(r.target,s,o)};return{sql:`SECURITY LABEL FOR ${q(r.provider)} ON ${_e(r.target,i)} IS ${q(S(n))}`}}}}},acl:{weight:21,metadata:!0,create:e=>Vt(e,"grant"),drop:e=>{let t=e.id,n=t.grantee==="PUBLIC"?"PUBLIC":g(t.grantee),s=t.grantee==="PUBLIC"?[]:[{kind:"role",name:t.grantee}],o=t.column===void 0?"REVOKE ALL":`REVOKE ALL (${g(t.column)})`,r=h(e,"_initPrivs");if(r===void 0)return{sql:`${o} ON ${Oe(t.target)} FROM ${n}`,consumes:s};let i={id:e.id,payload:{privileges:r.privileges,grantable:r.grantable}};return{sql:Vt(i,"grant").map(l=>l.sql).join(`;
`),consumes:s}},attributes:{privileges:"replace",grantable:"replace"}}};var Sr={policy:{weight:16,cascadesToChildren:!0,rebuildable:!0,suppressible:()=>!1,rename:(e,t)=>{let n=e.id;return{sql:`ALTER POLICY ${g(n.name)} ON ${y(n.schema,n.table)} RENAME TO ${g(t.name)}`}},create:e=>{let t=h(e,"roles").filter(n=>n!=="PUBLIC").map(n=>({kind:"role",name:n}));return[{sql:ir(e),consumes:t}]},drop:e=>{let t=e.id;return{sql:`DROP POLICY ${g(t.name)} ON ${y(t.schema,t.table)}`}},attributes:{usingExpr:"replace",checkExpr:"replace",roles:{alter:(e,t,n)=>{let s=e.id,o=t,r=n,i=r.map(u=>u==="PUBLIC"?"PUBLIC":g(u)),l=u=>({kind:"role",name:u}),c=r.filter(u=>u!=="PUBLIC").map(l),a=o.filter(u=>u!=="PUBLIC"&&!r.includes(u)).map(l);return{sql:`ALTER POLICY ${g(s.name)} ON ${y(s.schema,s.table)} TO ${i.join(", ")}`,...c.length>0?{consumes:c}:{},...a.length>0?{releases:a}:{}}}},cmd:"replace",permissive:"replace"}}};var yr={publication:{weight:18,cascadesToChildren:!0,create:(e,t)=>{let n=g(e.id.name),s=mr(e,t),o=`CREATE PUBLICATION ${n}`;h(e,"allTables")?o+=" FOR ALL TABLES":s.clauses.length>0&&(o+=` FOR ${s.clauses.join(", ")}`);let r=[`publish = ${q((h(e,"publish")??[]).join(", "))}`];return h(e,"viaRoot")&&r.push("publish_via_partition_root = true"),o+=` WITH (${r.join(", ")})`,[{sql:o,...s.consumes.length>0?{consumes:s.consumes}:{},...s.produced.length>0?{alsoProduces:s.produced}:{}}]},drop:e=>({sql:`DROP PUBLICATION ${g(e.id.name)}`}),ownerAlterPrefix:e=>`ALTER PUBLICATION ${g(e.id.name)}`,attributes:{publish:{alter:(e,t,n)=>({sql:`ALTER PUBLICATION ${g(e.id.name)} SET (publish = ${q((n??[]).join(", "))})`})},viaRoot:{alter:(e,t,n)=>({sql:`ALTER PUBLICATION ${g(e.id.name)} SET (publish_via_partition_root = ${n?"true":"false"})`})},allTables:"replace"}},publicationRel:{weight:18,create:e=>{let t=e.id;return[{sql:`ALTER PUBLICATION ${g(t.publication)} ADD ${fr(e)}`,consumes:[{kind:"table",schema:t.schema,name:t.table}]}]},drop:e=>{let t=e.id;return{sql:`ALTER PUBLICATION ${g(t.publication)} DROP TABLE ${y(t.schema,t.table)}`}},attributes:{columns:"replace",where:"replace"}},publicationSchema:{weight:18,create:e=>{let t=e.id;return[{sql:`ALTER PUBLICATION ${g(t.publication)} ADD TABLES IN SCHEMA ${g(t.schema)}`,consumes:[{kind:"schema",name:t.schema}]}]},drop:e=>{let t=e.id;return{sql:`ALTER PUBLICATION ${g(t.publication)} DROP TABLES IN SCHEMA ${g(t.schema)}`}},attributes:{}},subscription:{weight:23,create:e=>{let t=g(e.id.name),n=(h(e,"publications")??[]).map(d=>g(d)).join(", "),s=h(e,"slotName"),o=S(h(e,"conninfo")),r=o===ct,i=!!h(e,"enabled"),l=r&&i,c=["connect = false","enabled = false",`slot_name = ${s==null?"NONE":q(S(s))}`,...ii(e)],u=[{sql:`${l?`-- pg-delta: subscription ${t} was exported with REDACTED connection info;
-- its CONNECTION below is a placeholder. Set the real connection string and run
-- ALTER SUBSCRIPTION ${t} ENABLE; manually before it will replicate.
`:""}CREATE SUBSCRIPTION ${t} CONNECTION ${q(o)} PUBLICATION ${n} WITH (${c.join(", ")})`}];return i&&!l&&u.push({sql:`ALTER SUBSCRIPTION ${t} ENABLE`}),u},drop:e=>({sql:`DROP SUBSCRIPTION ${g(e.id.name)}`,...h(e,"slotName")==null?{}:{transactionality:"nonTransactional"}}),ownerAlterPrefix:e=>`ALTER SUBSCRIPTION ${g(e.id.name)}`,attributes:{enabled:{alter:(e,t,n)=>({sql:`ALTER SUBSCRIPTION ${g(e.id.name)} ${n?"ENABLE":"DISABLE"}`})},publications:{alter:(e,t,n)=>({sql:`ALTER SUBSCRIPTION ${g(e.id.name)} SET PUBLICATION ${(n??[]).map(s=>g(s)).join(", ")} WITH (refresh = false)`})},conninfo:{alter:(e,t,n)=>({sql:`ALTER SUBSCRIPTION ${g(e.id.name)} CONNECTION ${q(S(n))}`})},slotName:{alter:(e,t,n)=>({sql:`ALTER SUBSCRIPTION ${g(e.id.name)} SET (slot_name = ${n==null?"NONE":q(S(n))})`})},binary:Kt("binary"),streaming:zt("streaming"),synchronousCommit:zt("synchronous_commit"),disableOnError:Kt("disable_on_error"),runAsOwner:Kt("run_as_owner"),origin:zt("origin"),twoPhase:{alter:(e,t,n)=>{let s=Xt(e),o=Number(h(e,"_serverMajor")??0);if(o<18)throw new Error(`subscription ${s}: changing two_phase requires PostgreSQL 18+ (ALTER SUBSCRIPTION … SET (two_phase)). On PG${o||" < 18"} recreate the subscription manually — an automatic drop/recreate would drop the publisher's replication slot and break replication.`);let r=[{sql:`ALTER SUBSCRIPTION ${s} DISABLE`},{sql:`ALTER SUBSCRIPTION ${s} SET (two_phase = ${n?"true":"false"})`}];return h(e,"enabled")&&r.push({sql:`ALTER SUBSCRIPTION ${s} ENABLE`}),r}}}}};function ii(e){let t=[],n=(o,r)=>{let i=h(e,o);i!=null&&t.push(`${r} = ${i?"true":"false"}`)},s=(o,r)=>{let i=h(e,o);i!=null&&t.push(`${r} = ${q(S(i))}`)};return n("binary","binary"),s("streaming","streaming"),s("synchronousCommit","synchronous_commit"),n("disableOnError","disable_on_error"),n("runAsOwner","run_as_owner"),n("twoPhase","two_phase"),s("origin","origin"),t}function Xt(e){return g(e.id.name)}function Kt(e){return{alter:(t,n,s)=>({sql:`ALTER SUBSCRIPTION ${Xt(t)} SET (${e} = ${s?"true":"false"})`})}}function zt(e){return{alter:(t,n,s)=>({sql:`ALTER SUBSCRIPTION ${Xt(t)} SET (${e} = ${q(S(s))})`})}}function Ar(e,t,n){return`ALTER ROLE ${e} SET ${g(t)} TO ${q(n)}`}var _r={role:{weight:0,rename:X(e=>`ALTER ROLE ${g(e.id.name)}`),create:e=>{let t=g(e.id.name),n=[{sql:`CREATE ROLE ${t} WITH ${sr(e.payload)}`}];for(let s of h(e,"config")??[]){let[o,r]=de(s);n.push({sql:Ar(t,o,r)})}return n},drop:e=>({sql:`DROP ROLE ${g(e.id.name)}`}),attributes:{...Object.fromEntries(Object.entries(jt).map(([e,[t,n]])=>[e,{alter:(s,o,r)=>({sql:`ALTER ROLE ${g(s.id.name)} WITH ${r?t:n}`})}])),config:{alter:(e,t,n)=>{let s=g(e.id.name),o=new Map((t??[]).map(de)),r=new Map((n??[]).map(de)),i=[];for(let[l]of o)r.has(l)||i.push({sql:`ALTER ROLE ${s} RESET ${g(l)}`});for(let[l,c]of r)o.get(l)!==c&&i.push({sql:Ar(s,l,c)});return i}}}},membership:{weight:1,create:e=>{let t=e.id;return[{sql:`GRANT ${g(t.role)} TO ${g(t.member)}${h(e,"admin")?" WITH ADMIN OPTION":""}`,consumes:[{kind:"role",name:t.role},{kind:"role",name:t.member}]}]},drop:e=>{let t=e.id;return{sql:`REVOKE ${g(t.role)} FROM ${g(t.member)}`,consumes:[{kind:"role",name:t.role},{kind:"role",name:t.member}]}},attributes:{admin:{alter:(e,t,n)=>{let s=e.id;return{sql:n?`GRANT ${g(s.role)} TO ${g(s.member)} WITH ADMIN OPTION`:`REVOKE ADMIN OPTION FOR ${g(s.role)} FROM ${g(s.member)}`,consumes:[{kind:"role",name:s.role},{kind:"role",name:s.member}]}}}}},defaultPrivilege:{weight:22,create:e=>dr(e),drop:e=>ur(e),attributes:{privileges:"replace",grantable:"replace"}}};var Or={r:void 0,s:"SHAREABLE",w:"READ_WRITE"},ai={u:void 0,s:"SAFE",r:"RESTRICTED"},Nr=e=>e.id.kind==="procedure"?"PROCEDURE":"FUNCTION",Rr={weight:8,cascadesToChildren:!0,rebuildable:!0,defaclObjtype:"f",rename:(e,t)=>({sql:`ALTER ROUTINE ${he(e.id)} RENAME TO ${g(t.name)}`}),create:e=>[{sql:S(h(e,"def"))}],drop:e=>{let t=e.id;return{sql:`DROP ${Nr(e)} ${he(t)}`}},ownerAlterPrefix:e=>{let t=e.id;return`ALTER ${Nr(e)} ${he(t)}`},attributes:{def:{alter:(e,t,n,s)=>({sql:S(h(e,"def")),consumes:Ee(s,e.id)})},returnType:"replace",argSignature:"replace",language:"replace",isWindow:"replace"}},wr={function:Rr,procedure:Rr,aggregate:{weight:9,cascadesToChildren:!0,defaclObjtype:"f",create:e=>{let t=e.id,n=[`SFUNC = ${S(h(e,"sfunc"))}`,`STYPE = ${S(h(e,"stype"))}`],s=(f,m)=>{let E=h(e,f);E!=null&&n.push(`${m} = ${S(E)}`)},o=Number(h(e,"sspace")??0);o!==0&&n.push(`SSPACE = ${o}`),s("finalfunc","FINALFUNC"),h(e,"finalfuncExtra")&&n.push("FINALFUNC_EXTRA");let r=Or[S(h(e,"finalfuncModify")??"r")];r!=null&&n.push(`FINALFUNC_MODIFY = ${r}`),s("combinefunc","COMBINEFUNC"),s("serialfunc","SERIALFUNC"),s("deserialfunc","DESERIALFUNC"),s("msfunc","MSFUNC"),s("minvfunc","MINVFUNC"),s("mstype","MSTYPE");let i=Number(h(e,"msspace")??0);i!==0&&n.push(`MSSPACE = ${i}`),s("mfinalfunc","MFINALFUNC"),h(e,"mfinalfuncExtra")&&n.push("MFINALFUNC_EXTRA");let l=Or[S(h(e,"mfinalfuncModify")??"r")];l!=null&&n.push(`MFINALFUNC_MODIFY = ${l}`);let c=h(e,"initcond");c!=null&&n.push(`INITCOND = ${q(S(c))}`);let a=h(e,"minitcond");a!=null&&n.push(`MINITCOND = ${q(S(a))}`);let u=h(e,"sortop");u!=null&&n.push(`SORTOP = ${S(u)}`);let d=ai[S(h(e,"parallel")??"u")];return d!=null&&n.push(`PARALLEL = ${d}`),S(h(e,"aggKind"))==="h"&&n.push("HYPOTHETICAL"),[{sql:`CREATE AGGREGATE ${y(t.schema,t.name)}(${Le(e)}) (${n.join(", ")})`}]},drop:e=>{let t=e.id;return{sql:`DROP AGGREGATE ${y(t.schema,t.name)}(${Le(e)})`}},ownerAlterPrefix:e=>{let t=e.id;return`ALTER AGGREGATE ${y(t.schema,t.name)}(${Le(e)})`},attributes:{aggKind:"replace",numDirectArgs:"replace",sfunc:"replace",stype:"replace",finalfunc:"replace",initcond:"replace",combinefunc:"replace",serialfunc:"replace",deserialfunc:"replace",msfunc:"replace",minvfunc:"replace",mstype:"replace",msspace:"replace",mfinalfunc:"replace",minitcond:"replace",finalfuncExtra:"replace",mfinalfuncExtra:"replace",finalfuncModify:"replace",mfinalfuncModify:"replace",sspace:"replace",sortop:"replace",parallel:"replace"}}};function pt(e,t){let n=`CREATE SCHEMA ${g(e)}`;return t===void 0?n:`${n} AUTHORIZATION ${g(t)}`}var Tr={schema:{weight:1,defaclObjtype:"n",rename:X(e=>`ALTER SCHEMA ${g(e.id.name)}`),create:e=>[{sql:pt(e.id.name)}],drop:e=>({sql:`DROP SCHEMA ${g(e.id.name)}`}),ownerAlterPrefix:e=>`ALTER SCHEMA ${g(e.id.name)}`,attributes:{}},extension:{weight:2,create:(e,t,n,s)=>{let o=S(h(e,"schema")),r={kind:"schema",name:o},i=s?.get(r)!==void 0||t.get(r)!==void 0&&!t.isReferenceOnly(r),l=g(e.id.name);return[i?{sql:`CREATE EXTENSION ${l} SCHEMA ${g(o)}`,consumes:[r]}:{sql:`CREATE EXTENSION ${l}`}]},drop:(e,t)=>{let n=(t?.incomingEdges(e.id)??[]).filter(o=>o.kind==="memberOfExtension").map(o=>o.from),s=n.some(o=>o.kind==="table"||o.kind==="materializedView");return{sql:`DROP EXTENSION ${g(e.id.name)}`,...n.length>0?{alsoDestroys:n}:{},...s?{dataLoss:"destructive"}:{}}},attributes:{schema:{alter:(e,t,n)=>({sql:`ALTER EXTENSION ${g(e.id.name)} SET SCHEMA ${g(S(n))}`,consumes:[{kind:"schema",name:S(n)}],releases:[{kind:"schema",name:S(t)}]}),replaceWhen:(e,t,n)=>h(n,"relocatable")===!1}}}};var Ir={sequence:{weight:3,cascadesToChildren:!0,defaclObjtype:"S",dropRootRedirect:(e,t)=>{let n=e.payload.ownedBy;if(n==null)return;let s={kind:"column",schema:n.schema,table:n.table,name:n.column};if(t(s))return s;let o={kind:"table",schema:n.schema,name:n.table};if(t(o))return o},rename:X(e=>{let t=e.id;return`ALTER SEQUENCE ${y(t.schema,t.name)}`}),create:e=>{let t=e.id;return[{sql:`CREATE SEQUENCE ${y(t.schema,t.name)} AS ${S(h(e,"dataType"))} INCREMENT BY ${S(h(e,"increment"))} MINVALUE ${S(h(e,"minValue"))} MAXVALUE ${S(h(e,"maxValue"))} START WITH ${S(h(e,"start"))} CACHE ${S(h(e,"cache"))} ${h(e,"cycle")?"CYCLE":"NO CYCLE"}`},...Gt(e)]},drop:e=>{let t=e.id;return{sql:`DROP SEQUENCE ${y(t.schema,t.name)}`}},ownerAlterPrefix:e=>{let t=e.id;return`ALTER SEQUENCE ${y(t.schema,t.name)}`},attributes:{dataType:{alter:(e,t,n,s,o)=>be("dataType",e,o)},increment:{alter:(e,t,n,s,o)=>be("increment",e,o)},minValue:{alter:(e,t,n,s,o)=>be("minValue",e,o)},maxValue:{alter:(e,t,n,s,o)=>be("maxValue",e,o)},start:{alter:(e,t,n,s,o)=>be("start",e,o)},cache:{alter:(e,t,n,s,o)=>be("cache",e,o)},cycle:{alter:(e,t,n,s,o)=>be("cycle",e,o)},ownedBy:{alter:(e,t)=>Gt(e,{allowNone:!0,releaseOld:t})}}}};var Lr={table:{weight:4,cascadesToChildren:!0,defaclObjtype:"r",rename:X(e=>{let t=e.id;return`ALTER TABLE ${y(t.schema,t.name)}`}),create:(e,t)=>{let n=e.id,s=y(n.schema,n.name),r=S(h(e,"persistence"))==="u"?"UNLOGGED ":"",i=h(e,"partitionBound"),l=h(e,"partitionKey"),c=h(e,"parentTable"),a,u=[],d=[];if(i!=null&&c!=null)a=`CREATE ${r}TABLE ${s} PARTITION OF ${y(c.schema,c.name)} ${S(i)}`,l!=null&&(a+=` PARTITION BY ${S(l)}`),u.push({kind:"table",schema:c.schema,name:c.name});else{let A="";if(l!=null){let w=t.childrenOf(e.id).filter(N=>N.id.kind==="column");w.every(N=>h(N,"_position")!=null)&&w.sort((N,L)=>Number(h(N,"_position"))-Number(h(L,"_position"))),A=w.map(Yt).join(", ");for(let N of w)d.push(N.id)}a=`CREATE ${r}TABLE ${s} (${A})`,c!=null&&(a+=` INHERITS (${y(c.schema,c.name)})`,u.push({kind:"table",schema:c.schema,name:c.name})),l!=null&&(a+=` PARTITION BY ${S(l)}`)}let f=i==null&&l==null&&c==null,m=[{sql:a,...u.length>0?{consumes:u}:{},alsoProduces:d,...f?{acceptsColumnFolds:!0}:{}}];h(e,"rowSecurity")&&m.push({sql:`ALTER TABLE ${s} ENABLE ROW LEVEL SECURITY`}),h(e,"forceRowSecurity")&&m.push({sql:`ALTER TABLE ${s} FORCE ROW LEVEL SECURITY`});let E=h(e,"replicaIdentity");E!=null&&E!=="d"&&m.push(ut(e,t));let O=h(e,"reloptions");return O!=null&&O.length>0&&m.push({sql:`ALTER TABLE ${s} SET (${O.join(", ")})`}),m},drop:e=>{let t=e.id;return{sql:`DROP TABLE ${y(t.schema,t.name)}`,dataLoss:"destructive"}},ownerAlterPrefix:e=>{let t=e.id;return`ALTER TABLE ${y(t.schema,t.name)}`},attributes:{persistence:{alter:(e,t,n)=>{let s=e.id;return{sql:`ALTER TABLE ${y(s.schema,s.name)} SET ${S(n)==="u"?"UNLOGGED":"LOGGED"}`,rewriteRisk:!0}}},rowSecurity:{alter:(e,t,n)=>{let s=e.id;return{sql:`ALTER TABLE ${y(s.schema,s.name)} ${n?"ENABLE":"DISABLE"} ROW LEVEL SECURITY`}}},forceRowSecurity:{alter:(e,t,n)=>{let s=e.id;return{sql:`ALTER TABLE ${y(s.schema,s.name)} ${n?"FORCE":"NO FORCE"} ROW LEVEL SECURITY`}}},replicaIdentity:{alter:(e,t,n,s)=>ut(e,s)},replicaIdentityIndex:{alter:(e,t,n,s)=>ut(e,s)},reloptions:{alter:(e,t,n)=>{let s=e.id;return He(`ALTER TABLE ${y(s.schema,s.name)}`,t,n)}},partitionKey:"replace",partitionBound:"replace",parentTable:"replace"}},column:{weight:5,cascadesToChildren:!0,rename:(e,t)=>{let{schema:n,table:s,column:o}=ie(e);return{sql:`ALTER TABLE ${y(n,s)} RENAME COLUMN ${g(o)} TO ${g(t.name)}`}},create:(e,t)=>{let{schema:n,table:s,column:o}=ie(e),r=t.childrenOf(e.id).find(u=>u.id.kind==="default"&&u.id.name===o),i=Yt(e),l=[];r&&(i+=` DEFAULT ${S(r.payload.expr)}`,l.push(r.id));let c=e.payload.generatedExpr!=null||r!==void 0,a={sql:`ALTER TABLE ${y(n,s)} ADD COLUMN ${i}`,alsoProduces:l,...c?{rewriteRisk:!0}:{}};return e.parent!==void 0&&e.parent.kind==="table"&&e.payload.generatedExpr==null&&(a.compaction={foldInto:e.parent,clause:i}),[a]},drop:e=>{let{schema:t,table:n,column:s}=ie(e);return{sql:`ALTER TABLE ${y(t,n)} DROP COLUMN ${g(s)}`,dataLoss:"destructive"}},attributes:{type:{alter:(e,t,n,s,o)=>{let{schema:r,table:i,column:l}=ie(e),c=`ALTER TABLE ${y(r,i)} ALTER COLUMN ${g(l)}`,a=o.get(e.id)??e,u=a.payload.identity??null,d=e.payload.identity??null,f=a.payload.generatedExpr!=null,m=e.parent?.kind==="foreignTable",E=Ee(s,e.id),O=Ee(o,e.id),A=m||f?"":` USING ${g(l)}::${S(n)}`,w={sql:`${c} TYPE ${S(n)}${A}`,...m?{}:{rewriteRisk:!0}};E.length>0&&(w.consumes=E),O.length>0&&(w.releases=O);let N=[];d==null&&!f&&N.push({sql:`${c} DROP DEFAULT`});let L=u!=null&&d!=null?Wt(c,Ne(u),Ne(d)):[],b=rr(S(t),S(n));b&&N.push(...L),N.push(w),b||N.push(...L);let _=s.childrenOf(e.id).find(T=>T.id.kind==="default");return _&&N.push({sql:`${c} SET DEFAULT ${S(_.payload.expr)}`}),N},rebuildsDependents:()=>["view","materializedView","rule","policy"]},notNull:{alter:(e,t,n)=>{let{schema:s,table:o,column:r}=ie(e);return{sql:`ALTER TABLE ${y(s,o)} ALTER COLUMN ${g(r)} ${n?"SET":"DROP"} NOT NULL`}}},identity:{alter:(e,t,n,s,o)=>{let{schema:r,table:i,column:l}=ie(e),c=`ALTER TABLE ${y(r,i)} ALTER COLUMN ${g(l)}`,a=Ft(t),u=Ft(n);if(n==null)return{sql:`${c} DROP IDENTITY`,...a==null?{}:{alsoDestroys:[a]}};let d=We(n)==="a"?"GENERATED ALWAYS":"GENERATED BY DEFAULT",f=S(h(e,"type"));if(t==null)return{sql:`${c} ADD ${d} AS IDENTITY${Ht(Ne(n),f,Ut(n,{schema:r,table:i,column:l}))}`,...u==null?{}:{alsoProduces:[u]}};let m=[];if(We(t)!==We(n)&&m.push({sql:`${c} SET ${d}`}),a!=null&&u!=null&&p(a)!==p(u)){let A=a,w=u;m.push({sql:`ALTER SEQUENCE ${y(A.schema,A.name)} RENAME TO ${g(w.name)}`,alsoDestroys:[a],alsoProduces:[u]})}let E=o.get(e.id)?.payload.type;return E!==void 0&&E!==h(e,"type")||m.push(...Wt(c,Ne(t),Ne(n))),m}},collation:"replace",generatedExpr:"replace"}},default:{weight:6,cascadesToChildren:!0,rebuildable:!0,create:e=>{let{schema:t,table:n,column:s}=ie(e);return[{sql:`ALTER TABLE ${y(t,n)} ALTER COLUMN ${g(s)} SET DEFAULT ${S(h(e,"expr"))}`}]},drop:e=>{let{schema:t,table:n,column:s}=ie(e);return{sql:`ALTER TABLE ${y(t,n)} ALTER COLUMN ${g(s)} DROP DEFAULT`}},attributes:{expr:{alter:(e,t,n)=>{let{schema:s,table:o,column:r}=ie(e);return{sql:`ALTER TABLE ${y(s,o)} ALTER COLUMN ${g(r)} SET DEFAULT ${S(n)}`}}}}}};var $r={trigger:{weight:15,cascadesToChildren:!0,rebuildable:!0,rename:(e,t)=>{let n=e.id;return{sql:`ALTER TRIGGER ${g(n.name)} ON ${y(n.schema,n.table)} RENAME TO ${g(t.name)}`}},create:e=>{let t=e.id,n=[{sql:S(h(e,"def"))}],s=h(e,"enabled");return s!=null&&s!=="O"&&n.push({sql:`ALTER TABLE ${y(t.schema,t.table)} ${Se(S(s))} TRIGGER ${g(t.name)}`}),n},drop:e=>{let t=e.id;return{sql:`DROP TRIGGER ${g(t.name)} ON ${y(t.schema,t.table)}`}},attributes:{def:"replace",enabled:{alter:(e,t,n)=>{let s=e.id;return{sql:`ALTER TABLE ${y(s.schema,s.table)} ${Se(S(n))} TRIGGER ${g(s.name)}`}}}}},eventTrigger:{weight:17,rebuildable:!0,create:e=>{let t=g(e.id.name),n={kind:"function",schema:S(h(e,"functionSchema")),name:S(h(e,"functionName")),args:[]},s=`CREATE EVENT TRIGGER ${t} ON ${S(h(e,"event"))}`,o=h(e,"tags")??[];o.length>0&&(s+=` WHEN TAG IN (${o.map(l=>q(l)).join(", ")})`),s+=` EXECUTE FUNCTION ${y(S(h(e,"functionSchema")),S(h(e,"functionName")))}()`;let r=[{sql:s,consumes:[n]}],i=h(e,"enabled");return i!=null&&i!=="O"&&r.push({sql:`ALTER EVENT TRIGGER ${t} ${Se(S(i))}`}),r},drop:e=>({sql:`DROP EVENT TRIGGER ${g(e.id.name)}`}),ownerAlterPrefix:e=>`ALTER EVENT TRIGGER ${g(e.id.name)}`,attributes:{enabled:{alter:(e,t,n)=>({sql:`ALTER EVENT TRIGGER ${g(e.id.name)} ${Se(S(n))}`})},event:"replace",tags:"replace",functionSchema:"replace",functionName:"replace"}}};var Cr={domain:{weight:7,cascadesToChildren:!0,defaclObjtype:"T",rename:X(e=>{let t=e.id;return`ALTER DOMAIN ${y(t.schema,t.name)}`}),create:(e,t,n,s)=>{let o=e.id,r=y(o.schema,o.name);if(s?.get(e.id)!==void 0){let u=dt(t,e.id).filter(d=>s.get(d)!==void 0);if(u.length>0){let d=u.map(f=>{let m=f;return`${y(m.schema,m.table)}.${g(m.name)}`}).join(", ");throw new Error(`domain ${r}: cannot replace an in-use domain — column(s) ${d} depend on it, and PostgreSQL forbids dropping a type while a column uses it. Replacing an in-use domain is not supported yet; drop the using column(s), or recreate the domain, first.`)}}let i=`CREATE DOMAIN ${r} AS ${S(h(e,"baseType"))}`,l=h(e,"collation");l!=null&&(i+=` COLLATE ${S(l)}`);let c=h(e,"default");c!=null&&(i+=` DEFAULT ${S(c)}`),h(e,"notNull")&&(i+=" NOT NULL");let a=[];for(let u of t.childrenOf(e.id))u.id.kind==="constraint"&&h(u,"validated")&&(i+=` CONSTRAINT ${g(u.id.name)} ${S(h(u,"def"))}`,a.push(u.id));return[a.length>0?{sql:i,alsoProduces:a}:{sql:i}]},drop:e=>{let t=e.id;return{sql:`DROP DOMAIN ${y(t.schema,t.name)}`}},ownerAlterPrefix:e=>{let t=e.id;return`ALTER DOMAIN ${y(t.schema,t.name)}`},attributes:{default:{alter:(e,t,n)=>{let s=e.id;return{sql:n==null?`ALTER DOMAIN ${y(s.schema,s.name)} DROP DEFAULT`:`ALTER DOMAIN ${y(s.schema,s.name)} SET DEFAULT ${S(n)}`}}},notNull:{alter:(e,t,n)=>{let s=e.id;return{sql:`ALTER DOMAIN ${y(s.schema,s.name)} ${n?"SET":"DROP"} NOT NULL`}}},baseType:"replace",collation:"replace"}},type:{weight:7,cascadesToChildren:!0,defaclObjtype:"T",rename:X(e=>{let t=e.id;return`ALTER TYPE ${y(t.schema,t.name)}`}),create:(e,t,n,s)=>{let o=e.id,r=y(o.schema,o.name),i=S(h(e,"variant")),l,c=[];if(i==="enum"){let a=h(e,"values").map(u=>q(u));l=`CREATE TYPE ${r} AS ENUM (${a.join(", ")})`}else if(i==="composite"){let a=t.childrenOf(e.id).filter(f=>f.id.kind==="typeAttribute");a.every(f=>h(f,"_position")!=null)&&a.sort((f,m)=>Number(h(f,"_position"))-Number(h(m,"_position")));let d=a.map(f=>Jt(f));for(let f of a)c.push(f.id);l=`CREATE TYPE ${r} AS (${d.join(", ")})`}else{if(s?.get(e.id)!==void 0){let E=dt(t,e.id).filter(O=>s.get(O)!==void 0);if(E.length>0){let O=E.map(A=>{let w=A;return`${y(w.schema,w.table)}.${g(w.name)}`}).join(", ");throw new Error(`range type ${r}: cannot replace an in-use range type — column(s) ${O} depend on it, and PostgreSQL forbids dropping a type while a column uses it. Replacing an in-use range type is not supported yet; drop the using column(s), or recreate the type, first.`)}}let a=[`SUBTYPE = ${S(h(e,"subtype"))}`],u=h(e,"subtypeOpclass");u!=null&&a.push(`SUBTYPE_OPCLASS = ${S(u)}`);let d=h(e,"collation");d!=null&&a.push(`COLLATION = ${S(d)}`);let f=h(e,"subtypeDiff");f!=null&&a.push(`SUBTYPE_DIFF = ${S(f)}`);let m=h(e,"multirangeTypeName");m!=null&&a.push(`MULTIRANGE_TYPE_NAME = ${S(m)}`),l=`CREATE TYPE ${r} AS RANGE (${a.join(", ")})`}return[{sql:l,...c.length>0?{alsoProduces:c}:{}}]},drop:e=>{let t=e.id;return{sql:`DROP TYPE ${y(t.schema,t.name)}`}},ownerAlterPrefix:e=>{let t=e.id;return`ALTER TYPE ${y(t.schema,t.name)}`},attributes:{values:{alter:(e,t,n,s,o)=>{let r=e.id,i=y(r.schema,r.name),l=t??[],c=n??[];if(Pt(l,c)){let b=[],_=0;for(let T=0;T<c.length;T++){let R=c[T];if(_<l.length&&R===l[_]){_++;continue}let k=_<l.length?`BEFORE ${q(l[_])}`:T>0?`AFTER ${q(c[T-1])}`:l.length>0?`BEFORE ${q(l[0])}`:"";b.push({sql:`ALTER TYPE ${i} ADD VALUE ${q(R)}${k?` ${k}`:""}`,transactionality:"commitBoundaryAfter"})}return b}let a=p(e.id),u=new Set,d=s.edges.filter(b=>p(b.to)===a&&(b.from.kind==="domain"||b.from.kind==="type")&&p(b.from)!==a&&s.get(b.from)!==void 0&&o.get(b.from)!==void 0).map(b=>b.from).filter(b=>{let _=p(b);return u.has(_)?!1:(u.add(_),!0)}).sort((b,_)=>p(b)<p(_)?-1:1);if(d.length>0){let b=d.map(_=>{let T=_;return`${T.kind==="domain"?"DOMAIN":"TYPE"} ${y(T.schema,T.name)}`}).join(", ");throw new Error(`enum ${i}: cannot remove or reorder values while non-column object(s) depend on it — ${b}. The rebuild drops the old enum, which those objects still reference, and PostgreSQL forbids dropping a type in use. Migrating a DOMAIN / COMPOSITE / RANGE that uses an enum across a value-set change is not supported yet; drop the dependent object(s), or recreate them, first.`)}let f=["type","domain","table","view","materializedView","foreignTable","sequence"],m=b=>f.some(_=>s.get({kind:_,schema:r.schema,name:b})!==void 0||o.get({kind:_,schema:r.schema,name:b})!==void 0),E=63,O="__pgdelta_replaced",A=b=>{let _=b===null?"":`_${b}`,T=E-Fe(O)-Fe(_);return`${nr(r.name,T)}${O}${_}`},w=A(null);for(let b=2;m(w);b++){if(b>1e4)throw new Error(`enum ${i}: could not find a free temp name for the value-set rebuild after 10000 attempts — an extraordinary number of \`${O}\`-suffixed occupants exist in schema "${r.schema}"`);w=A(b)}let N=[{sql:`ALTER TYPE ${i} RENAME TO ${g(w)}`},{sql:`CREATE TYPE ${i} AS ENUM (${c.map(b=>q(b)).join(", ")})`}],L=s.edges.filter(b=>b.from.kind==="column"&&p(b.to)===a&&s.get(b.from)!==void 0&&o.get(b.from)!==void 0).map(b=>b.from).sort((b,_)=>`${b.schema}.${b.table}.${b.name}`<`${_.schema}.${_.table}.${_.name}`?-1:1);for(let b of L){let _=s.get(b),R=(_!==void 0?S(h(_,"type")):"").endsWith("[]"),k=R?`${i}[]`:i,$=R?`${g(b.name)}::text[]::${i}[]`:`${g(b.name)}::text::${i}`;N.push({sql:`ALTER TABLE ${y(b.schema,b.table)} ALTER COLUMN ${g(b.name)} TYPE ${k} USING ${$}`,consumes:[b],dataLoss:"destructive",rewriteRisk:!0})}return N.push({sql:`DROP TYPE ${y(r.schema,w)}`}),N},rebuildsDependents:(e,t)=>!Pt(e??[],t??[])},subtype:"replace",subtypeOpclass:"replace",subtypeDiff:"replace",multirangeTypeName:"replace",collation:"replace",variant:"replace"}},typeAttribute:{weight:7,create:e=>{let t=e.id;return[{sql:`ALTER TYPE ${y(t.schema,t.type)} ADD ATTRIBUTE ${Jt(e)} CASCADE`,consumes:[{kind:"type",schema:t.schema,name:t.type}]}]},drop:e=>{let t=e.id;return{sql:`ALTER TYPE ${y(t.schema,t.type)} DROP ATTRIBUTE ${g(t.name)} CASCADE`,dataLoss:"destructive"}},rename:(e,t)=>{let n=e.id;return{sql:`ALTER TYPE ${y(n.schema,n.type)} RENAME ATTRIBUTE ${g(n.name)} TO ${g(t.name)} CASCADE`}},attributes:{type:{alter:(e,t,n,s,o)=>{let r=e.id,i={kind:"type",schema:r.schema,name:r.type};if(dt(s,i).length>0)throw new Error(`composite type ${y(r.schema,r.type)}: cannot change attribute "${r.name}" type while the type is used by table columns — PostgreSQL forbids ALTER ATTRIBUTE … TYPE on an in-use composite. Drop the using columns, or recreate the type, first.`);let l=Ee(s,i),c=Ee(o,i),a={sql:`ALTER TYPE ${y(r.schema,r.type)} ALTER ATTRIBUTE ${g(r.name)} TYPE ${S(n)} CASCADE`};return l.length>0&&(a.consumes=l),c.length>0&&(a.releases=c),a}},collation:"replace"}},collation:{weight:7,create:e=>{let t=e.id,n=S(h(e,"provider")),s=[];return n==="i"?(s.push("PROVIDER = icu",`LOCALE = ${q(S(h(e,"locale")))}`),h(e,"deterministic")||s.push("DETERMINISTIC = false")):n==="b"?s.push("PROVIDER = builtin",`LOCALE = ${q(S(h(e,"locale")))}`):s.push(`LC_COLLATE = ${q(S(h(e,"lcCollate")))}`,`LC_CTYPE = ${q(S(h(e,"lcCtype")))}`),[{sql:`CREATE COLLATION ${y(t.schema,t.name)} (${s.join(", ")})`}]},drop:e=>{let t=e.id;return{sql:`DROP COLLATION ${y(t.schema,t.name)}`}},ownerAlterPrefix:e=>{let t=e.id;return`ALTER COLLATION ${y(t.schema,t.name)}`},attributes:{provider:"replace",deterministic:"replace",locale:"replace",lcCollate:"replace",lcCtype:"replace"}}};var kr={view:{weight:12,cascadesToChildren:!0,rebuildable:!0,defaclObjtype:"r",rename:X(e=>{let t=e.id;return`ALTER VIEW ${y(t.schema,t.name)}`}),create:e=>{let t=e.id;return[{sql:`CREATE VIEW ${y(t.schema,t.name)}${qt(e)} AS ${S(h(e,"def"))}`}]},drop:e=>{let t=e.id;return{sql:`DROP VIEW ${y(t.schema,t.name)}`}},ownerAlterPrefix:e=>{let t=e.id;return`ALTER VIEW ${y(t.schema,t.name)}`},attributes:{def:"replace",reloptions:{alter:(e,t,n)=>{let s=e.id;return He(`ALTER VIEW ${y(s.schema,s.name)}`,t,n)}}}},materializedView:{weight:13,cascadesToChildren:!0,rebuildable:!0,defaclObjtype:"r",rename:X(e=>{let t=e.id;return`ALTER MATERIALIZED VIEW ${y(t.schema,t.name)}`}),create:e=>{let t=e.id;return[{sql:`CREATE MATERIALIZED VIEW ${y(t.schema,t.name)}${qt(e)} AS ${S(h(e,"def"))}`}]},drop:e=>{let t=e.id;return{sql:`DROP MATERIALIZED VIEW ${y(t.schema,t.name)}`,dataLoss:"destructive"}},ownerAlterPrefix:e=>{let t=e.id;return`ALTER MATERIALIZED VIEW ${y(t.schema,t.name)}`},attributes:{def:"replace",reloptions:{alter:(e,t,n)=>{let s=e.id;return He(`ALTER MATERIALIZED VIEW ${y(s.schema,s.name)}`,t,n)}}}},rule:{weight:15,cascadesToChildren:!0,rebuildable:!0,create:e=>{let t=e.id,n=[{sql:S(h(e,"def"))}],s=h(e,"enabled");return s!=null&&s!=="O"&&n.push({sql:`ALTER TABLE ${y(t.schema,t.table)} ${Se(S(s))} RULE ${g(t.name)}`}),n},drop:e=>{let t=e.id;return{sql:`DROP RULE ${g(t.name)} ON ${y(t.schema,t.table)}`}},attributes:{def:"replace",enabled:{alter:(e,t,n)=>{let s=e.id;return{sql:`ALTER TABLE ${y(s.schema,s.table)} ${Se(S(n))} RULE ${g(s.name)}`}}}}}};var Ce=new Set(["concurrentIndexes"]),ci={..._r,...Tr,...Lr,...Ir,...gr,...Er,...wr,...Cr,...kr,...$r,...Sr,...yr,...hr,...br};function Qt(e){let t=ci[e];if(!t)throw new Error(`rule table: no rules for kind '${e}' — extend the rule vocabulary (guardrail 3)`);return t}function li(e,t){return`${e}\0${t}`}function Zt(e){return t=>{if(t.kind==="extensionIntent"){let n=e?.get(li(t.ext,t.intentKind));if(n===void 0)throw new Error(`rule table: no intent rule registered for extension '${t.ext}' intent kind '${t.intentKind}' — register the handler's intentKinds via the integration profile`);return n}return Qt(t.kind)}}var ft=Zt();import{fileURLToPath as di}from"node:url";function vr(e,t){let n=e.facts(),s=new Set;for(let a of n){let u=p(a.id);t.has(a.id)&&t.hashOf(a.id)===e.hashOf(a.id)&&xr(t,a.id)===xr(e,a.id)&&s.add(u)}let o=new Set;for(let a of n){let u=p(a.id);s.has(u)||o.add(u)}let r=new Set;for(let a of n){let u=p(a.id);if(!o.has(u))continue;let d=a.parent;for(;d!==void 0;){let f=p(d);if(o.has(f)||r.has(f))break;r.add(f),d=e.get(d)?.parent}}let i=new Set([...o,...r]),l=[];for(let a of n)i.has(p(a.id))&&l.push(a);let c=[];for(let a of e.edges){let u=p(a.from),d=p(a.to);(i.has(u)&&i.has(d)||ee(a)&&i.has(u))&&c.push(a)}return Q(l,c,"liveDb",new Set,{allowDangling:ee})}function xr(e,t){return e.outgoingEdges(t).map(n=>`${n.kind}->${p(n.to)}`).sort().join("|")}var bl=di(new URL("./baselines/",import.meta.url));var ke=e=>`${p(e.from)}|${e.kind}|${p(e.to)}`;function xe(e,t,n,s){let o=i=>{let l=i;for(;l!==void 0;){let c=n.get(p(l));if(c!==void 0)return{id:l,attribution:c};l=e.get(l)?.parent}};for(let i of e.facts()){if(t.has(i.id))continue;let l=o(i.id);l!==void 0&&s({subject:{kind:"fact",id:i.id},...l.attribution,...p(l.id)===p(i.id)?{}:{viaDescendantOf:l.id}})}let r=new Set(t.edges.map(ke));for(let i of e.edges){if(r.has(ke(i)))continue;let l=[o(i.from),o(i.to)].filter(a=>a!==void 0),c=new Set;for(let a of l){let u=`${p(a.id)}|${a.attribution.stage}|${a.attribution.reasonCode}`;if(c.has(u))continue;c.add(u);let d=p(i.from)===p(a.id)||p(i.to)===p(a.id);s({subject:{kind:"edge",edge:i},...a.attribution,...d?{}:{viaDescendantOf:a.id}})}}}function Dr(e,t,n,s,o){let r=p(o.id);if(n.has(r))return!0;if(s.has(r))return!1;let i=[r],l=t.has(r)?!0:void 0,c=l===void 0?o.parent:void 0;for(;c!==void 0;){let u=p(c);if(t.has(u)||n.has(u)){l=!0;break}if(s.has(u)){l=!1;break}let d=e.get(c);if(d===void 0)break;i.push(u),c=d.parent}let a=l??!1;for(let u of i)(a?n:s).add(u);return a}function mt(e,t){if(t.size===0)return e;let n=new Set,s=new Set,o=e.facts().filter(c=>!Dr(e,t,n,s,c)),r=new Set(o.map(c=>p(c.id))),i=e.edges.filter(c=>{let a=r.has(p(c.from));return a&&r.has(p(c.to))?!0:a&&ee(c)&&!e.has(c.to)}),l=new Set([...e.referenceOnly].filter(c=>r.has(c)));return Q(o,i,e.source,l,{allowDangling:ee})}function ui(e,t){let n=new Set,s=new Set;for(let o of e.facts())Dr(e,t,n,s,o);return n}function Mr(e,t,n={}){if(t==="cluster")return e;let s=new Set;for(let d of e.facts())(d.id.kind==="role"||d.id.kind==="membership")&&s.add(p(d.id));if(s.size===0)return e;let o=ui(e,s),r=e.facts().filter(d=>!o.has(p(d.id))),i=new Set(r.map(d=>p(d.id))),{defaultOwner:l}=n,c=[];for(let d of e.edges){let f=i.has(p(d.from)),m=i.has(p(d.to));if(f&&m){c.push(d);continue}if(d.kind==="owner"&&f&&!m&&d.to.kind==="role"){let E=d.to.name;if(l!==void 0&&E===l)continue;c.push(d)}}let a=new Set([...e.referenceOnly].filter(d=>i.has(d))),u=Q(r,c,e.source,a,{allowDangling:ee});if(n.collectSuppression!==void 0){let d={stage:"managementScope",reasonCode:"management-scope.database.cluster-object",classification:"acknowledged"},f=new Set;if(l!==void 0)for(let m of e.edges)m.kind==="owner"&&m.to.kind==="role"&&m.to.name===l&&i.has(p(m.from))&&f.add(ke(m));if(xe(e,u,new Map([...s].map(m=>[m,d])),m=>{m.subject.kind==="edge"&&f.has(ke(m.subject.edge))||n.collectSuppression?.(m)}),l!==void 0){let m=new Set(u.edges.map(ke));for(let E of e.edges)E.kind==="owner"&&E.to.kind==="role"&&E.to.name===l&&i.has(p(E.from))&&!m.has(ke(E))&&n.collectSuppression({subject:{kind:"edge",edge:E},stage:"managementScope",reasonCode:"management-scope.database.default-owner",classification:"acknowledged"})}}return u}function Ge(e){let t=new Map,n=[];for(let s of e.facts()){let o=e.outgoingEdges(s.id).filter(r=>r.kind==="memberOfExtension").map(r=>r.to);o.length>0&&(t.set(p(s.id),o),n.push(s.id))}for(;n.length>0;){let s=n.pop();if(s.kind==="schema")continue;let o=t.get(p(s));for(let r of e.childrenOf(s)){if(Ss(r.id))continue;let i=p(r.id);t.has(i)||(t.set(i,o),n.push(r.id))}}return t}function Br(e,t){let n=new Set;if(t.isSuperuser)return n;for(let s of e.facts())s.id.kind==="acl"&&s.id.target.kind==="fdw"&&n.add(p(s.id));return n}function Je(e,t){return e.isSuperuser||e.memberOf.includes(t)}function pi(e){let n=e.replace(/[.+?^${}()|[\]\\]/g,"\\$&").replace(/\*/g,".*");return new RegExp(`^${n}$`)}function pe(e,t){return pi(e).test(t)}function Pr(e){if("schema"in e&&typeof e.schema=="string")return e.schema}function en(e){if("name"in e&&typeof e.name=="string")return e.name}function fi(e,t){let n=[],s=e;for(;s!==void 0;){let o=t.get(s);if(!o)break;n.push(o),s=o.parent}return n}function mi(e,t,n){let s=fi(e,n);for(let o of s){let r=n.outgoingEdges(o.id);for(let i of r)if(i.kind==="memberOfExtension"&&i.to.kind==="extension"&&i.to.name===t)return!0}return!1}function fe(e,t,n,s){if("all"in e)return e.all.every(r=>fe(r,t,n,s));if("any"in e)return e.any.some(r=>fe(r,t,n,s));if("not"in e)return!fe(e.not,t,n,s);if("kind"in e)return(Array.isArray(e.kind)?e.kind:[e.kind]).some(i=>t.id.kind===i);if("schema"in e){let r=Pr(t.id);return r===void 0?!1:(Array.isArray(e.schema)?e.schema:[e.schema]).some(l=>pe(l,r))}if("name"in e){let r=en(t.id);return r===void 0?!1:(Array.isArray(e.name)?e.name:[e.name]).some(l=>pe(l,r))}if("verb"in e)return s?.verbAssumed===!0;if("ownedByExtension"in e)return mi(t.id,e.ownedByExtension,n);if("parentKind"in e)return t.parent===void 0?!1:t.parent.kind===e.parentKind;if("owner"in e){let r=n.outgoingEdges(t.id).find(c=>c.kind==="owner"),i=r?.to.kind==="role"?r.to.name:t.payload.owner;return typeof i!="string"?!1:(Array.isArray(e.owner)?e.owner:[e.owner]).some(c=>pe(c,i))}if("idField"in e){let i=t.id[e.idField.field];return typeof i!="string"?!1:(Array.isArray(e.idField.glob)?e.idField.glob:[e.idField.glob]).some(c=>pe(c,i))}if("target"in e){let i=t.id.target;if(i===null||typeof i!="object")return!1;let l=i,{kind:c,schema:a,name:u}=e.target;if(c!==void 0){let d=l.kind;if(typeof d!="string"||!(Array.isArray(c)?c:[c]).some(m=>m===d))return!1}if(a!==void 0){let d=l.schema;if(typeof d!="string"||!(Array.isArray(a)?a:[a]).some(m=>pe(m,d)))return!1}if(u!==void 0){let d=l.name;if(typeof d!="string"||!(Array.isArray(u)?u:[u]).some(m=>pe(m,d)))return!1}return!0}if("partitionOf"in e){if(typeof t.payload.partitionBound!="string")return!1;let{schema:r,name:i}=e.partitionOf;if(r===void 0&&i===void 0)return!0;let l=t.payload.parentTable;if(l===null||typeof l!="object")return!1;let c=l;if(r!==void 0){let a=c.schema;if(typeof a!="string"||!(Array.isArray(r)?r:[r]).some(d=>pe(d,a)))return!1}if(i!==void 0){let a=c.name;if(typeof a!="string"||!(Array.isArray(i)?i:[i]).some(d=>pe(d,a)))return!1}return!0}if("edgeTo"in e){let r=n.outgoingEdges(t.id);for(let i of r){if(e.edgeTo.edgeKind!==void 0&&i.kind!==e.edgeTo.edgeKind)continue;let l=i.to;if(!(e.edgeTo.kind!==void 0&&l.kind!==e.edgeTo.kind)){if(e.edgeTo.schema!==void 0){let c=l.schema;if(typeof c!="string"||!(Array.isArray(e.edgeTo.schema)?e.edgeTo.schema:[e.edgeTo.schema]).some(u=>pe(u,c)))continue}return!0}}return!1}return e}function gi(e,t,n){switch(e.verb){case"add":return{fact:n.get(e.fact.id)??e.fact,view:n};case"remove":return{fact:t.get(e.fact.id)??e.fact,view:t};case"set":{let s=n.get(e.id);return s?{fact:s,view:n}:void 0}case"link":{let s=n.get(e.edge.from)??t.get(e.edge.from);return s?{fact:s,view:n}:void 0}case"unlink":{let s=t.get(e.edge.from)??n.get(e.edge.from);return s?{fact:s,view:t}:void 0}}}function gt(e,t,n,s){if("all"in e)return e.all.every(r=>gt(r,t,n,s));if("any"in e)return e.any.some(r=>gt(r,t,n,s));if("not"in e)return!gt(e.not,t,n,s);if("verb"in e)return(Array.isArray(e.verb)?e.verb:[e.verb]).some(i=>i===t.verb);let o=gi(t,n,s);return o===void 0?!1:fe(e,o.fact,o.view)}function Re(e){return jr(e,new Set)}function jr(e,t){if(t.has(e.id))throw new Error(`Policy cycle detected: policy "${e.id}" extends itself (cycle)`);t.add(e.id);let n=e.filter??[],s=e.serialize??[],o=e.assumedRoles??[],r=e.assumedSchemas??[],i=e.assumedPublications??[],l=[],c=[],a=[],u=[],d=[],f;if(e.extends)for(let O of e.extends){let A=new Set(t),w=jr(O,A);l.push(...w.filter),c.push(...w.serialize),a.push(...w.assumedRoles),u.push(...w.assumedSchemas),d.push(...w.assumedPublications),f===void 0&&w.defaultOwner!==void 0&&(f=w.defaultOwner)}t.delete(e.id);let m={id:e.id,filter:[...n,...l],serialize:[...s,...c],assumedRoles:[...new Set([...o,...a])],assumedSchemas:[...new Set([...r,...u])],assumedPublications:[...new Set([...i,...d])]};e.baseline!==void 0&&(m.baseline=e.baseline);let E=e.defaultOwner??f;return E!==void 0&&(m.defaultOwner=E),m}var qr=new Set(["name","schema","table","args","role","member","server","type","publication","grantee","objtype","provider","target","ext","intentKind","key"]);function Ve(e,t){if("idField"in e){if(!qr.has(e.idField.field))throw new Error(`Policy "${t}": idField references unknown identity field "${e.idField.field}". Known fields: ${[...qr].sort().join(", ")}`)}else if("all"in e)for(let n of e.all)Ve(n,t);else if("any"in e)for(let n of e.any)Ve(n,t);else"not"in e&&Ve(e.not,t)}function Fr(e){let t=Re(e);for(let n of t.serialize)for(let s of Object.keys(n.params))if(!Ce.has(s))throw new Error(`Policy "${e.id}": unknown serialize parameter "${s}". Known parameters: ${[...Ce].join(", ")}`);for(let n of t.filter)Ve(n.match,e.id);for(let n of t.serialize)Ve(n.match,e.id)}function ht(e){return"verb"in e?!0:"all"in e?e.all.some(ht):"any"in e?e.any.some(ht):"not"in e?ht(e.not):!1}function hi(e,t,n){for(let s of t){if(ht(s.match)){if(s.action==="include"&&(fe(s.match,e,n,{verbAssumed:!0})||fe(s.match,e,n)))return;continue}if(fe(s.match,e,n))return s.action==="exclude"?s:void 0}}function ae(e){return Array.isArray(e)?e:[e]}function tn(e){if("not"in e)return!1;if("all"in e)return e.all.some(tn)&&!e.all.some(Et);if("any"in e)return e.any.length>0&&e.any.every(tn)&&!e.any.some(Et);if("name"in e)return ae(e.name).every(ne);if("schema"in e)return ae(e.schema).every(ne);if("owner"in e)return ae(e.owner).every(ne);if("ownedByExtension"in e)return ne(e.ownedByExtension);if("idField"in e)return ae(e.idField.glob).every(ne);if("target"in e){let t=[e.target.name,e.target.schema].filter(n=>n!==void 0);return t.length>0&&t.every(n=>ae(n).every(ne))}if("partitionOf"in e){let t=[e.partitionOf.name,e.partitionOf.schema].filter(n=>n!==void 0);return t.length>0&&t.every(n=>ae(n).every(ne))}return!1}function ne(e){return!e.includes("*")}function Et(e){return"not"in e?!0:"all"in e?e.all.some(Et):"any"in e?e.any.some(Et):"name"in e?ae(e.name).some(t=>!ne(t)):"schema"in e?ae(e.schema).some(t=>!ne(t)):"owner"in e?ae(e.owner).some(t=>!ne(t)):"ownedByExtension"in e?!ne(e.ownedByExtension):"idField"in e?ae(e.idField.glob).some(t=>!ne(t)):"target"in e?[e.target.name,e.target.schema].filter(t=>t!==void 0).some(t=>ae(t).some(n=>!ne(n))):"partitionOf"in e?[e.partitionOf.name,e.partitionOf.schema].filter(t=>t!==void 0).some(t=>ae(t).some(n=>!ne(n))):!1}function Ei(e,t){return{stage:"policyScopeRule",reasonCode:t.audit?.reasonCode??`policy:${e}:rule:${tt(t.match)}`,classification:t.audit?.classification??(tn(t.match)?"acknowledged":"suspicious")}}function Ur(e,t,n,s,o){if(t===void 0&&n===void 0&&s===void 0&&!e.edges.some(_=>_.kind==="memberOfExtension"||_.kind==="managedBy"))return e;let r=Ge(e),i=new Set(r.keys()),l=s?vr(e,s):e;if(s!==void 0&&o!==void 0){let _={stage:"baseline",reasonCode:"baseline.identical-state",classification:"acknowledged"},T=new Map;for(let R of e.facts())l.has(R.id)||T.set(p(R.id),_);xe(e,l,T,o)}let c=new Set;for(let _ of l.facts())l.outgoingEdges(_.id).some(T=>T.kind==="managedBy")&&c.add(p(_.id));if(c.size>0){let _=l;if(l=mt(l,c),o!==void 0){let T={stage:"managedBy",reasonCode:"managed-by.provenance",classification:"acknowledged"};xe(_,l,new Map([...c].map(R=>[R,T])),o)}}if(n!==void 0){let _=Br(l,n);if(_.size>0){let T=l;if(l=mt(l,_),o!==void 0){let R={stage:"capability",reasonCode:"capability.fdw-acl",classification:"acknowledged"};xe(T,l,new Map([..._].map(k=>[k,R])),o)}}}let a=t?Re(t):void 0,u=a?.filter??[],d=new Set(a?.assumedSchemas??[]),f=new Set(a?.assumedPublications??[]),m=_=>_.kind==="schema"?en(_):Pr(_),E=_=>{if(_.kind==="publication"){let R=en(_);return R!==void 0&&f.has(R)}let T=m(_);return T!==void 0&&d.has(T)},O=new Set,A=new Set,w=new Map;for(let _ of l.facts()){let T=hi(_,u,l);if(T===void 0)continue;let R=Ei(a?.id??t?.id??"unknown",T);E(_.id)?(A.add(p(_.id)),w.set(p(_.id),R)):(O.add(p(_.id)),w.set(p(_.id),R))}let N=mt(l,O);if(o!==void 0&&O.size>0&&xe(l,N,w,o),i.size===0&&A.size===0)return N;let L=new Set(N.facts().map(_=>p(_.id))),b=new Set;for(let _ of i)L.has(_)&&b.add(_);for(let _ of A)L.has(_)&&b.add(_);if(b.size===0)return N;if(o!==void 0){let _=(T,R,k)=>{let $=N.getByEncoded(T);if($!==void 0){o({subject:{kind:"fact",id:$.id},...R,...k===void 0?{}:{viaDescendantOf:k}});for(let H of N.outgoingEdges($.id))o({subject:{kind:"edge",edge:H},...R,...k===void 0?{}:{viaDescendantOf:k}})}};for(let T of i){if(!L.has(T))continue;let R=N.getByEncoded(T);if(R===void 0)continue;let k=R.id,$=R.parent;for(;$!==void 0&&r.has(p($));)k=$,$=e.get($)?.parent;_(T,{stage:"referenceOnly",reasonCode:"reference-only.extension-member",classification:"acknowledged"},p(k)===T?void 0:k)}for(let T of A){if(!L.has(T))continue;let R=w.get(T),k=N.getByEncoded(T)?.id.kind==="publication"?"assumed-publication":"assumed-schema";_(T,{stage:"referenceOnly",reasonCode:`reference-only.${k}:${R.reasonCode}`,classification:R.classification})}}return Q(N.facts(),[...N.edges],N.source,b,{allowDangling:ee})}function nn(e,t,n,s){let o=Re(t),r=[],i=[];for(let l of e){let c=!1,a="include";for(let u of o.filter)if(gt(u.match,l,n,s)){c=!0,a=u.action;break}!c||a==="include"?r.push(l):i.push(l)}return{kept:r,filtered:i}}function Ke(e,t={}){let n=t.scope??"cluster",s=Ur(e,t.policy,t.capability,t.baseline,t.collectSuppression);return Mr(s,n,{...t.defaultOwner!==void 0?{defaultOwner:t.defaultOwner}:{},...t.collectSuppression!==void 0?{collectSuppression:t.collectSuppression}:{}})}function Wr(e){return`${p(e.from)}|${e.kind}|${p(e.to)}`}function sn(e){return e.kind==="fact"?`fact:${p(e.id)}`:`edge:${Wr(e.edge)}`}function bi(e){return e.verb==="link"||e.verb==="unlink"?{kind:"edge",edge:e.edge}:{kind:"fact",id:Be(e)}}function Hr(e){switch(e.verb){case"add":case"remove":return`${e.verb}|${p(e.fact.id)}`;case"set":return`${e.verb}|${p(e.id)}|${e.attr}`;case"link":case"unlink":return`${e.verb}|${Wr(e.edge)}`}}var Si=()=>({entries:[],summary:{total:0,suspicious:0,acknowledged:0,baseline:0}});function Yr(e,t,n){if(n.length===0)return Si();let s=new Map;for(let r of n){let{suppression:i}=r,l=sn(i.subject),c=s.get(l)??[];c.push(r),s.set(l,c)}let o=[];for(let r of Me(e,t)){let i=bi(r),l=[],c=new Set,a=[...s.get(sn(i))??[],...i.kind==="edge"?(s.get(sn({kind:"fact",id:i.edge.from}))??[]).filter(({suppression:u})=>u.stage==="referenceOnly"):[]];for(let{side:u,suppression:d}of a){let f=d.viaDescendantOf?p(d.viaDescendantOf):"",m=`${u}|${d.stage}|${d.reasonCode}|${d.classification}|${f}`;c.has(m)||(c.add(m),l.push({side:u,stage:d.stage,reasonCode:d.reasonCode,classification:d.classification,...d.viaDescendantOf===void 0?{}:{viaDescendantOf:d.viaDescendantOf}}))}l.length!==0&&(l.sort((u,d)=>{let f=`${u.side}|${u.stage}|${u.reasonCode}|${u.viaDescendantOf?p(u.viaDescendantOf):""}`,m=`${d.side}|${d.stage}|${d.reasonCode}|${d.viaDescendantOf?p(d.viaDescendantOf):""}`;return f<m?-1:f>m?1:0}),o.push({delta:r,subject:i,suppressions:l,classification:l.some(u=>u.classification==="suspicious")?"suspicious":"acknowledged"}))}return o.sort((r,i)=>{let l=Hr(r.delta),c=Hr(i.delta);return l<c?-1:l>c?1:0}),{entries:o,summary:{total:o.length,suspicious:o.filter(r=>r.classification==="suspicious").length,acknowledged:o.filter(r=>r.classification==="acknowledged").length,baseline:o.filter(r=>r.suppressions.some(i=>i.stage==="baseline")).length}}}var yi={table:{create:"none",alter:"accessExclusive",drop:"accessExclusive"},column:{create:"accessExclusive",alter:"accessExclusive",drop:"accessExclusive"},default:{create:"accessExclusive",alter:"accessExclusive",drop:"accessExclusive"},constraint:{create:"accessExclusive",alter:"accessExclusive",drop:"accessExclusive"},index:{create:"share",alter:"accessExclusive",drop:"accessExclusive"},trigger:{create:"shareRowExclusive",alter:"shareRowExclusive",drop:"accessExclusive"},policy:{create:"accessExclusive",alter:"accessExclusive",drop:"accessExclusive"},rule:{create:"accessExclusive",alter:"accessExclusive",drop:"accessExclusive"},view:{create:"none",alter:"accessExclusive",drop:"accessExclusive"},materializedView:{create:"none",alter:"accessExclusive",drop:"accessExclusive"},foreignTable:{create:"none",alter:"accessExclusive",drop:"accessExclusive"},sequence:{create:"none",alter:"accessExclusive",drop:"accessExclusive"},publication:{create:"none",alter:"shareUpdateExclusive",drop:"none"}},Ai=new Set(["schema","role","membership","defaultPrivilege","extension","function","procedure","aggregate","domain","type","collation","eventTrigger","subscription","fdw","server","userMapping","comment","acl"]);function Gr(e,t){let n=yi[e];return n?.[t]!==void 0?n[t]:Ai.has(e)?"none":"accessExclusive"}function Jr(e,t){let n=e.parent===void 0?"":p(e.parent);return`${e.id.kind}|${n}|${t}`}function Vr(e,t,n,s,o=ft){let r=[],i=new Map;for(let a of e.values()){if(o(a.id).rename===void 0||a.parent!==void 0&&e.has(p(a.parent)))continue;let u=Jr(a,n.structuralRollupOf(a.id)),d=i.get(u)??[];d.push(a),i.set(u,d)}let l=new Map;for(let a of t.values()){if(o(a.id).rename===void 0||a.parent!==void 0&&t.has(p(a.parent)))continue;let u=Jr(a,s.structuralRollupOf(a.id)),d=l.get(u)??[];d.push(a),l.set(u,d)}let c=new Set;for(let[a,u]of i){let d=l.get(a);if(d!==void 0)if(u.length===1&&d.length===1){let f=u[0].id,m=d[0].id;c.add(p(f)),r.push({kind:f.kind,from:f,to:m,status:"unambiguous"})}else for(let f of u){c.add(p(f.id));for(let m of d)r.push({kind:f.id.kind,from:f.id,to:m.id,status:"ambiguous",reason:`${u.length} removed × ${d.length} added with identical content — cannot pick`})}}for(let a of e.values())if(!c.has(p(a.id))&&o(a.id).rename!==void 0&&!(a.parent!==void 0&&e.has(p(a.parent))))for(let u of t.values())u.id.kind!==a.id.kind||!(a.parent===void 0&&u.parent===void 0||a.parent!==void 0&&u.parent!==void 0&&p(a.parent)===p(u.parent))||n.hashOf(a.id)===s.hashOf(u.id)&&r.push({kind:a.id.kind,from:a.id,to:u.id,status:"nearMiss",reason:"own payload matches but the subtree differs — likely a name-bearing child payload (index/constraint defs embed names, §4.1); staying drop+create"});return r.sort((a,u)=>{let d=`${p(a.from)}>${p(a.to)}`,f=`${p(u.from)}>${p(u.to)}`;return d<f?-1:1})}function me(e,t){let n=[t],s=o=>{for(let r of e.childrenOf(o))n.push(r.id),s(r.id)};return s(t),n}function ue(e,t){try{return Qt(e)[t]}catch{return}}var bt=e=>ue(e,"cascadesToChildren")===!0,Kr=e=>ue(e,"rebuildable")===!0;function zr(e){let{source:t,desired:n,projectedDesired:s,removed:o,added:r,setsByFact:i,replaceIds:l,dropRootOf:c,acceptedRenames:a,deltas:u,params:d,serializeRules:f,capability:m,rulesForId:E}=e,O=[],A=new Map,w=new Map,N=[],L=[],b=(I,C,B)=>{let D=O.length,M=[...B.produces??[],...C.alsoProduces??[]],F=[...B.destroys??[],...C.alsoDestroys??[]],x=[...B.consumes??[],...C.consumes??[]],P=(M[0]??F[0]??x[0])?.kind;O.push({sql:C.sql,verb:I,produces:M,consumes:x,destroys:F,releases:C.releases??[],transactionality:C.transactionality??"transactional",lockClass:C.lockClass??(P===void 0?"none":Gr(P,I)),newSegmentBefore:!1,dataLoss:C.dataLoss??"none",rewriteRisk:C.rewriteRisk??!1}),N[D]=C.compaction,L[D]=C.acceptsColumnFolds??!1;for(let U of M){let K=p(U);A.has(K)||A.set(K,D)}for(let U of F)w.set(p(U),D);return D},_=new Map,T=I=>{if(f.length===0)return d;let C=p(I.id),B=_.get(C);if(B!==void 0)return B;let D=d;for(let M of f)if(fe(M.match,I,n)){D={...M.params,...d};break}return _.set(C,D),D},R=(I,C)=>{E(I.id).create(I,C,T(I),t).forEach((D,M)=>{b("create",D,{produces:M===0?[I.id]:[],consumes:[...M===0?[]:[I.id],...I.parent!==void 0?[I.parent]:[]]})})},k=new Set;for(let{from:I,to:C,sourceSubtree:B,desiredSubtree:D}of a){let M=E(I.id).rename;if(M===void 0)throw new Error(`rename: kind '${I.id.kind}' matched as candidate but has no rename rule`);k.add(b("alter",M(I,C.id),{produces:D,destroys:B,consumes:C.parent!==void 0?[C.parent]:[]}))}let $=new Set;for(let I of l){let C=t.getByEncoded(I),B=s.getByEncoded(I),D=F=>{let x=[F.id],P=K=>{for(let se of t.childrenOf(K.id))bt(K.id.kind)?(x.push(se.id),P(se)):D(se)};P(F);let U=p(F.id)===I;b("drop",E(F.id).drop(F,t),{consumes:U&&F.parent!==void 0?[F.parent]:[],destroys:x})};D(C),R(B,s);let M=F=>{for(let x of s.childrenOf(F)){let P=p(x.id);if(!r.has(P)){if(A.has(P)){M(x.id);continue}$.add(P),R(x,s),M(x.id)}}};M(B.id)}let H=I=>{let C=0,B=I.parent;for(;B!==void 0;)C++,B=n.get(B)?.parent;return C};for(let I of[...r.values()].sort((C,B)=>H(C)-H(B)))A.has(p(I.id))||R(I,s);for(let I of r.values())if(!A.has(p(I.id)))throw new Error(`emit invariant: added fact ${p(I.id)} (kind '${I.id.kind}') is not materialized by any create action — its create rule must produce it`);let v=[...r.values()];for(let I of[...l,...$]){let C=s.getByEncoded(I);C&&v.push(C)}for(let I of v){let C=ue(I.id.kind,"defaclObjtype");if(C===void 0||!s.has(I.id))continue;let B=s.outgoingEdges(I.id).find(F=>F.kind==="owner"),D=B?.to.kind==="role"?B.to.name:void 0;if(typeof D!="string")continue;let M=I.id.schema??null;for(let F of s.facts()){if(F.id.kind!=="defaultPrivilege")continue;let x=F.id;if(x.role!==D||x.objtype!==C||x.schema!=null&&x.schema!==M||x.grantee===D)continue;let P={kind:"acl",target:I.id,grantee:x.grantee};s.has(P)||b("alter",{sql:`REVOKE ALL ON ${Oe(I.id)} FROM ${x.grantee==="PUBLIC"?"PUBLIC":g(x.grantee)}`,consumes:x.grantee==="PUBLIC"?[]:[{kind:"role",name:x.grantee}]},{consumes:[I.id]})}}let j=new Map;for(let[I,C]of o){let B=c.get(I),D=j.get(B)??[];D.push(C.id),j.set(B,D)}for(let[I,C]of o){if(c.get(I)!==I||l.has(I))continue;let B=E(C.id).drop(C,t),D=j.get(I)??[C.id];b("drop",B,{consumes:C.parent!==void 0?[C.parent]:[],destroys:[C.id,...D.filter(M=>p(M)!==I)]})}for(let[I,C]of i){if(l.has(I)||$.has(I))continue;let B=s.get(C[0].id),D=E(B.id);for(let M of C){let F=D.attributes[M.attr];if(F===void 0||F==="replace")continue;let x=F.alter(B,M.from,M.to,s,t);for(let P of Array.isArray(x)?x:[x])b("alter",P,{consumes:[B.id]})}}{let I=new Map;for(let M of u)M.verb!=="unlink"||M.edge.kind!=="owner"||I.set(p(M.edge.from),M.edge.to);let C=new Map,B=new Map;for(let{from:M,to:F}of a){let x=me(t,M.id),P=me(n,F.id);for(let U=0;U<P.length;U++){let K=x[U],se=P[U];if(K===void 0||se===void 0)continue;let ce=t.outgoingEdges(K).find(Ro=>Ro.kind==="owner");if(ce?.to.kind!=="role"){C.set(p(se),null);continue}let Xe=ce.to.name;C.set(p(se),Xe),B.set(p(se),ce.to)}}let D=new Set;for(let M of u){if(M.verb!=="link"||M.edge.kind!=="owner")continue;let F=M.edge.from,x=p(F),P=n.get(F);if(!P)continue;let U=ue(P.id.kind,"ownerAlterPrefix");if(!U)continue;let K=U(P),se=M.edge.to;if(se.kind!=="role")continue;let ce=se.name;if(C.get(x)===ce)continue;if(m!==void 0&&!Je(m,ce))throw new Error(`capability: cannot set owner of ${p(F)} to role "${ce}" — applier "${m.role}" is not a superuser or a member of that role; grant membership or apply as a member/superuser`);let Xe=I.get(x)??B.get(x);b("alter",{sql:`${K} OWNER TO ${g(ce)}`,consumes:[se],...Xe!==void 0?{releases:[Xe]}:{}},{consumes:[F]}),D.add(x)}for(let M of[...l,...$]){if(D.has(M))continue;let F=s.getByEncoded(M);if(!F)continue;let x=ue(F.id.kind,"ownerAlterPrefix");if(!x)continue;let P=s.outgoingEdges(F.id).find(K=>K.kind==="owner");if(P?.to.kind!=="role")continue;let U=P.to.name;if(m!==void 0&&!Je(m,U))throw new Error(`capability: cannot set owner of ${M} to role "${U}" — applier "${m.role}" is not a superuser or a member of that role; grant membership or apply as a member/superuser`);b("alter",{sql:`${x(F)} OWNER TO ${g(U)}`,consumes:[P.to]},{consumes:[F.id]})}}return{actions:O,producerOf:A,destroyerOf:w,foldHints:N,acceptsFolds:L,renameActionIndices:k}}var rn=class{keyOf;#e=[];constructor(t){this.keyOf=t}get size(){return this.#e.length}push(t){this.#e.push(t);let n=this.#e.length-1;for(;n>0;){let s=n-1>>1;if(this.keyOf(this.#e[s])<=this.keyOf(this.#e[n]))break;[this.#e[s],this.#e[n]]=[this.#e[n],this.#e[s]],n=s}}pop(){let t=this.#e[0],n=this.#e.pop();if(this.#e.length>0){this.#e[0]=n;let s=0;for(;;){let o=2*s+1,r=o+1,i=s;if(o<this.#e.length&&this.keyOf(this.#e[o])<this.keyOf(this.#e[i])&&(i=o),r<this.#e.length&&this.keyOf(this.#e[r])<this.keyOf(this.#e[i])&&(i=r),i===s)break;[this.#e[i],this.#e[s]]=[this.#e[s],this.#e[i]],s=i}}return t}};function Xr(e,t,n,s){let o=Array.from({length:e},()=>[]),r=Array.from({length:e},()=>0),i=new Set;for(let[a,u]of t){if(a===u)continue;let d=`${a}>${u}`;i.has(d)||(i.add(d),o[a].push(u),r[u]=r[u]+1)}let l=new rn(n);for(let a=0;a<e;a++)r[a]===0&&l.push(a);let c=[];for(;l.size>0;){let a=l.pop();c.push(a);for(let u of o[a])r[u]=r[u]-1,r[u]===0&&l.push(u)}if(c.length!==e){let a=new Set;for(let d=0;d<e;d++)r[d]>0&&a.add(d);let u=[...a].map(s).join(`
  `);throw new Error(`dependency cycle among ${a.size} actions — this is a rule/emission bug, fix the rule (guardrail 4):
  ${u}`)}return c}var _i=new Set(Ie),Qr=new Set(Es),Oi=(()=>{let e=new Map;for(let[t,n]of bs){let s=e.get(t)??new Set;s.add(n),e.set(t,s)}return e})();function Zr(e,t,n,s,o,r=new Set,i=new Set,l=new Set,c){let a=[],u=new Map,d=(L,b)=>{let _=u.get(b);if(_!==void 0)return _;let T=new Set([b]),R=new Map([[b,void 0]]),k=[[L,b]],$,H=(v,j)=>{if(_i.has(v.kind))return!0;let I=p(v),C=u.get(I);return C===!0?!0:(C===!1||T.has(I)||(T.add(I),R.set(I,j),k.push([v,I])),!1)};for(;k.length>0&&$===void 0;){let[v,j]=k.pop();for(let C of o.outgoingEdges(v))if(C.kind==="depends"&&H(C.to,j)){$=j;break}if($!==void 0)break;let I=Oi.get(v.kind);if(I!==void 0){for(let C of o.childrenOf(v))if(I.has(C.id.kind)&&H(C.id,j)){$=j;break}}}if($===void 0){for(let v of T)u.set(v,!1);return!1}for(let v=$;v!==void 0;v=R.get(v))u.set(v,!0);return!0},f=new Map,m=L=>{let b=p(L);return f.set(b,L),b},E=L=>{if(L.kind==="role"){let _=L.name;if(_.startsWith("pg_")||_==="PUBLIC"||i.has(_))return!0}if(L.kind==="schema"&&l.has(L.name))return!0;let b=L.schema;return b===void 0||!l.has(b)?!1:!o.has(L)},O=Ge(o),A=Ge(s),w=L=>{let b=O.get(L)??A.get(L);return b!==void 0&&b.some(_=>t.has(p(_))||s.has(_))},N=new Map;return e.forEach((L,b)=>{if(L.verb!=="alter")return;let _=L.consumes[0];if(_===void 0)return;let T=p(_),R=N.get(T)??[];R.push(b),N.set(T,R)}),e.forEach((L,b)=>{for(let R of L.releases){let k=n.get(m(R));k!==void 0&&k!==b&&a.push([b,k])}for(let R of L.consumes){let k=m(R),$=t.get(k);$!==void 0&&$!==b&&a.push([$,b]);let H=n.get(k);H!==void 0&&H!==b&&$===void 0&&a.push([b,H]);for(let v of O.get(k)??[]){let j=t.get(p(v));j!==void 0&&j!==b&&a.push([j,b])}for(let v of A.get(k)??[]){let j=n.get(p(v));j!==void 0&&j!==b&&a.push([b,j])}if($===void 0&&!s.has(R)&&!E(R)&&!w(k))throw new Error(`missing requirement: action "${L.sql}" consumes ${k}, which neither exists on the target nor is produced by this plan${o.has(R)?" — a filter may be hiding its creation":""}`)}if(c!==void 0&&L.verb==="alter"){for(let R of L.consumes)if(!(!Qr.has(R.kind)||!o.has(R))&&d(R,p(R))){c.add(b);break}}let _=new Set(L.produces.map(R=>p(R)));for(let R of L.produces)if(m(R),!!o.has(R)){c!==void 0&&!c.has(b)&&Qr.has(R.kind)&&d(R,p(R))&&c.add(b);for(let k of o.outgoingEdges(R)){if(k.kind==="owner"&&r.has(b))continue;let $=m(k.to),H=t.get($);if(H!==void 0&&H!==b)a.push([H,b]);else if(H===void 0){for(let v of N.get($)??[]){if(v===b)continue;e[v].consumes.some(I=>_.has(p(I)))||a.push([v,b])}if(k.kind==="depends"&&!s.has(k.to)&&!E(k.to)&&!w($))throw new Error(`missing requirement: action "${L.sql}" produces ${p(R)}, which depends on ${$} — neither produced by this plan nor present on the target${o.has(k.to)?" (a filter may be hiding its creation)":""}`)}}}let T=new Set(L.destroys.map(R=>p(R)));for(let R of L.destroys){let k=m(R),$=t.get(k);if($!==void 0&&$!==b&&a.push([b,$]),!s.has(R))continue;for(let v of s.incomingEdgesByEncoded(k)){if(v.kind==="owner"&&r.has(b))continue;let j=m(v.from),I=n.get(j);if(I!==void 0&&I!==b)a.push([I,b]);else if(I===void 0&&o.has(v.from)){if(t.has(k))continue;if(!o.outgoingEdges(v.from).some(B=>p(B.to)===k)){for(let B of N.get(j)??[])B!==b&&a.push([B,b]);continue}throw new Error(`missing requirement: ${j} survives but depends on ${k}, which this plan drops without recreating`)}}for(let v of s.outgoingEdges(R)){let j=m(v.to);if(!n.has(j))for(let I of N.get(j)??[]){if(I===b)continue;e[I].releases.some(B=>T.has(p(B)))||a.push([b,I])}}let H=s.get(R);if(H?.parent!==void 0){let v=n.get(m(H.parent));v!==void 0&&v!==b&&a.push([b,v])}}}),a}function eo(e,t,n=ft,s,o){let r=e[t],i=r.produces[0]??r.destroys[0]??r.consumes[0],l=(()=>{if(i===void 0)return 99;try{return n(i).weight}catch{return 99}})(),c=r.verb==="drop"?"0":"1",a=r.verb==="drop"?99-l:l,u=r.verb!=="drop"&&o?.has(t)===!0?"1":"0",d=(i!==void 0?s?.(i,r):void 0)??(i?p(i):"");return`${c}|${u}|${String(a).padStart(2,"0")}|${d}|${String(t).padStart(6,"0")}`}function to(e,t,n,s,o,r,i){let l=new Map;for(let[d,f]of n){let m=l.get(f)??[];m.push(d),l.set(f,m)}let c=new Map;e.forEach((d,f)=>{for(let m of d.produces){let E=p(m);c.has(E)||c.set(E,f)}});let a=new Set,u=new Map;for(let d=0;d<e.length;d++){let f=t[d],m=s[f];if(m===void 0)continue;let E=e[d];if(E.newSegmentBefore||E.transactionality!=="transactional")continue;let O=E.produces[0]?.kind==="constraint";if(O){if(i===void 0){if(m.executorSafe!==!0)continue}else if(i.exclude?.has(p(E.produces[0])))continue}let A=c.get(p(m.foldInto));if(A===void 0||A>=d)continue;let w=t[A];if(!o[w]||a.has(A))continue;let N=e[A];if(N.verb!=="create"||N.newSegmentBefore)continue;let L=O&&i!==void 0,b=m.foldInto;if(!(l.get(f)??[]).some(T=>(u.get(T)??r[T])<=A?!1:L?e[r[T]].produces.some($=>$.kind==="column"&&b.kind==="table"&&$.schema===b.schema&&$.table===b.name):!0)){N.sql=N.sql.endsWith("()")?`${N.sql.slice(0,-2)}(${m.clause})`:`${N.sql.slice(0,-1)}, ${m.clause})`,N.produces.push(...E.produces);for(let T of E.consumes)N.consumes.some(R=>p(R)===p(T))||N.consumes.push(T);E.dataLoss==="destructive"&&(N.dataLoss="destructive"),N.rewriteRisk=N.rewriteRisk||E.rewriteRisk,a.add(d),u.set(f,A)}}return a.size>0?e.filter((d,f)=>!a.has(f)):[...e]}function no(e,t){let n=new Map;e.forEach((r,i)=>{if(r.verb==="create")for(let l of r.produces){let c=p(l);n.has(c)||n.set(c,{index:i,sql:r.sql,consumes:new Set(r.consumes.map(p))})}});let s=new Set;for(let r of e)for(let i of r.releases)s.add(p(i));let o=new Set;return e.forEach((r,i)=>{if(r.verb!=="drop"||r.destroys.length!==1)return;let l=r.destroys[0],c=p(l),a=n.get(c);a===void 0||a.index===i||a.sql===r.sql&&(s.has(c)||t.childrenOf(l).length>0||r.consumes.every(u=>a.consumes.has(p(u)))&&o.add(i))}),o.size>0?e.filter((r,i)=>!o.has(i)):[...e]}function so(e,t){let n=new Set;for(let r of e)if(r.verb==="drop")for(let i of r.destroys)n.add(p(i));let s=(r,i)=>{let l=r;for(;l!==void 0;){if(p(l)===i)return!0;l=t.get(l)?.parent}return!1},o=new Set;return e.forEach((r,i)=>{if(r.verb!=="drop"||r.destroys.length!==1)return;let l=r.destroys[0];if(l.kind!=="policy")return;let c=t.get(l)?.parent;if(c===void 0)return;let a=p(c);if(!n.has(a))return;t.outgoingEdges(l).some(d=>n.has(p(d.to))&&!s(d.to,a))||o.add(i)}),o.size>0?e.filter((r,i)=>!o.has(i)):[...e]}var Ni={type:"USAGE",domain:"USAGE",language:"USAGE",function:"EXECUTE",procedure:"EXECUTE",aggregate:"EXECUTE"};function ro(e,t){if(e.length!==t.length)return!1;let n=new Set(e);return t.every(s=>n.has(s))}function Ri(e,t,n){let s=ue(t.kind,"defaclObjtype");if(s===void 0)return!1;let o=t.kind==="schema"?null:t.schema??null;return e.facts().some(r=>{if(r.id.kind!=="defaultPrivilege")return!1;let i=r.id;return!(i.objtype!==s||i.schema!==null&&i.schema!==o||n!==void 0&&i.role!==n.role)})}function oo(e,t,n){let s=new Set;for(let r of e)if(r.verb==="create")for(let i of r.produces)i.kind!=="acl"&&s.add(p(i));let o=new Set;for(let r of e){if(r.verb!=="create")continue;let i=r.produces.find(d=>d.kind==="acl");if(i===void 0||i.kind!=="acl"||!s.has(p(i.target)))continue;let l=t.get(i);if(l===void 0)continue;let c=l.payload;if((c.grantable??[]).length>0)continue;let a=c.privileges??[];if(Ri(t,i.target,n))continue;if(i.grantee==="PUBLIC"){let d=Ni[i.target.kind];d!==void 0&&a.length===1&&a[0]===d&&o.add(p(i));continue}let u=t.outgoingEdges(i.target).find(d=>d.kind==="owner");u!==void 0&&u.to.kind==="role"&&u.to.name===i.grantee&&c._ownerDefault!==void 0&&ro(a,c._ownerDefault)&&o.add(p(i))}return o.size===0?[...e]:e.filter(r=>!r.produces.some(i=>o.has(p(i)))&&!r.consumes.some(i=>o.has(p(i))))}function io(e,t,n){let s=new Map;for(let r of e)if(r.verb==="create")for(let i of r.produces)i.kind!=="acl"&&s.set(p(i),r);if(s.size===0)return[...e];let o=new Set;return e.forEach((r,i)=>{if(r.verb!=="alter"||r.produces.length>0||r.destroys.length>0||r.releases.length>0||r.newSegmentBefore||r.transactionality!=="transactional")return;let l=r.consumes.filter(m=>m.kind==="role"),c=r.consumes.filter(m=>m.kind!=="role");if(l.length!==1||c.length!==1)return;let a=c[0],u=l[0],d=s.get(p(a));if(!(d===void 0||ue(a.kind,"ownerAlterPrefix")===void 0||!t.outgoingEdges(a).some(m=>m.kind==="owner"&&m.to.kind==="role"&&m.to.name===u.name))&&!(n!==void 0&&!Je(n,u.name))){if(a.kind==="schema"){if(d.newSegmentBefore||d.transactionality!=="transactional")return;let m=a.name;if(d.sql!==pt(m))return;d.sql=pt(m,u.name),d.consumes.some(E=>p(E)===p(u))||d.consumes.push(u),o.add(i);return}n!==void 0&&n.role===u.name&&o.add(i)}}),o.size>0?e.filter((r,i)=>!o.has(i)):[...e]}function ao(e,t,n){let s=new Set;for(let c of e)if(c.verb==="create")for(let a of c.produces)a.kind!=="acl"&&s.add(p(a));if(s.size===0)return[...e];let o=t.facts().filter(c=>c.id.kind==="defaultPrivilege"),r=(c,a,u)=>{let d=ue(c.kind,"defaclObjtype");if(d===void 0)return!1;let f=c.kind==="schema"?null:c.schema??null;for(let m of o){let E=m.id;if(E.objtype!==d||E.grantee!==a||E.schema!==null&&E.schema!==f||n!==void 0&&E.role!==n.role)continue;let O=m.payload;if((O.grantable??[]).length>0)return!0;for(let A of O.privileges??[])if(!u.has(A))return!0}return!1},i=new Set;for(let c of e)for(let a of c.consumes)a.kind==="acl"&&i.add(p(a));let l=new Set;return e.forEach((c,a)=>{if(c.verb!=="create")return;let u=c.produces.find(A=>A.kind==="acl");if(u===void 0||u.kind!=="acl"||!s.has(p(u.target)))return;let d=t.get(u);if(d===void 0)return;let f=d.payload,m=f.privileges??[];if(m.length===0||(f.grantable??[]).length>0)return;let E=p(u);if(!i.has(E))return;let O=t.outgoingEdges(u.target).find(A=>A.kind==="owner");O!==void 0&&O.to.kind==="role"&&O.to.name===u.grantee||r(u.target,u.grantee,new Set(m))||l.add(a)}),l.size>0?e.filter((c,a)=>!l.has(a)):[...e]}var on=e=>e.kind==="acl";function co(e,t){let n=new Set;for(let l of e)if(l.verb==="create")for(let c of l.produces)on(c)&&n.add(p(c));let s=l=>{if(l.verb!=="create"||l.produces.length>0||l.destroys.length>0||l.releases.length>0||l.transactionality!=="transactional")return;let c=l.consumes.filter(on);if(c.length!==1)return;let a=c[0];if(a.column!==void 0||n.has(p(a)))return;let u=t.get(a);if(u===void 0)return;let d=u.payload;if((d.grantable??[]).length>0)return;let f=d.privileges??[];if(f.length!==0&&l.sql===Ue(a.target,f,[a.grantee]))return{aclId:a,targetKey:p(a.target),privileges:f}},o=[],r=0;for(;r<e.length;){let l=e[r],c=s(l);if(c===void 0){o.push(l),r++;continue}let a=[c],u=r+1;for(;u<e.length;){let m=e[u];if(m.newSegmentBefore)break;let E=s(m);if(E===void 0||E.targetKey!==c.targetKey||!ro(E.privileges,c.privileges))break;a.push(E),u++}if(a.length===1){o.push(l),r++;continue}let d=[],f=new Set;for(let m=r;m<u;m++)for(let E of e[m].consumes){let O=p(E);f.has(O)||(f.add(O),d.push(E))}o.push({...l,sql:Ue(c.aclId.target,c.privileges,a.map(m=>m.aclId.grantee)),consumes:d}),r=u}let i=l=>on(l)&&!n.has(p(l));return o.map(l=>l.consumes.some(i)?{...l,consumes:l.consumes.filter(c=>!i(c))}:l)}function lo(e){let t={destructiveActions:e.filter(n=>n.dataLoss==="destructive").length,rewriteRiskActions:e.filter(n=>n.rewriteRisk).length,nonTransactionalActions:e.filter(n=>n.transactionality==="nonTransactional").length,lockClasses:{}};for(let n of e)t.lockClasses[n.lockClass]=(t.lockClasses[n.lockClass]??0)+1;return t}function uo(e){let{actions:t,producerOf:n,destroyerOf:s,source:o,desired:r,renameActionIndices:i,foldHints:l,acceptsFolds:c,assumedRoleNames:a,assumedSchemaNames:u,capability:d,compact:f,foldConstraints:m,rulesForId:E}=e,O=new Set,A=Zr(t,n,s,o,r,i,a,u,O),w=(T,R)=>{if(R.verb!=="create"||T.kind!=="column")return;let k=r.get(T)?.payload._position;if(typeof k!="number")return;let $=T;return`column\0${$.schema}\0${$.table}\0${String(k).padStart(6,"0")}`},N=Xr(t.length,A,T=>eo(t,T,E,w,O),T=>t[T].sql),L=Array.from({length:t.length},()=>0);N.forEach((T,R)=>{L[T]=R});let b=N.map(T=>t[T]);for(let T=0;T<t.length;T++){if(t[T].transactionality!=="commitBoundaryAfter")continue;let R=Number.POSITIVE_INFINITY;for(let[k,$]of A){if(k!==T)continue;let H=L[$];H<R&&(R=H)}Number.isFinite(R)&&(b[R].newSegmentBefore=!0)}let _=f?co(io(ao(oo(so(no(to(b,N,A,l,c,L,m),o),o),r,d),r,d),r,d),r):b;return{actions:_,safetyReport:lo(_)}}var wi=new Set([...Ie,"extension","extensionIntent"]);function Ti(e){let t=e;for(;"target"in t;)t=t.target;return t.kind}function po(e){for(let t of e)for(let n of[t.produces,t.consumes,t.destroys,t.releases])for(let s of n)if(wi.has(Ti(s)))return!0;return!1}function fo(e){let t=new Map;for(let{from:n,to:s}of e)n.id.kind==="role"&&s.id.kind==="role"&&t.set(n.id.name,s.id.name);return t}function oe(e,t){let n=s=>t.get(s)??s;switch(e.kind){case"role":return{...e,name:n(e.name)};case"membership":return{...e,role:n(e.role),member:n(e.member)};case"userMapping":return{...e,role:n(e.role)};case"defaultPrivilege":return{...e,role:n(e.role),grantee:n(e.grantee)};case"acl":return{...e,target:oe(e.target,t),grantee:n(e.grantee)};case"comment":return{...e,target:oe(e.target,t)};case"securityLabel":return{...e,target:oe(e.target,t)};default:return e}}function Ii(e,t,n){if(e.kind!=="policy"||!Array.isArray(t.roles))return t;let s=t.roles;return s.every(o=>typeof o=="string")?{...t,roles:s.map(o=>n.get(o)??o).sort()}:t}function an(e,t){if(t.size===0)return e;let n=e.facts().map(i=>({id:oe(i.id,t),...i.parent===void 0?{}:{parent:oe(i.parent,t)},payload:Ii(i.id,i.payload,t)})),s=e.edges.map(i=>({...i,from:oe(i.from,t),to:oe(i.to,t)})),o=new Set([...e.referenceOnly].map(i=>p(oe(rt(i),t)))),r=Q(n,s,e.source,o,{allowDangling:ee});return r.diagnostics.push(...e.diagnostics),r}var cn=e=>`${p(e.from)}|${e.kind}|${p(e.to)}`;function mo(e,t){if(t.length===0)return e;let n=new Map(e.facts().map(i=>[p(i.id),i])),s=new Map(e.edges.map(i=>[cn(i),i]));for(let i of t)switch(i.verb){case"add":n.delete(p(i.fact.id));break;case"remove":n.set(p(i.fact.id),i.fact);break;case"set":{let l=p(i.id),c=n.get(l);if(c===void 0)break;let a={...c.payload,[i.attr]:i.from};n.set(l,{...c,payload:a});break}case"link":s.delete(cn(i.edge));break;case"unlink":s.set(cn(i.edge),i.edge);break}let o=new Map,r=[];for(let[i,l]of n){if(l.parent===void 0)continue;let c=p(l.parent);if(n.has(c)){let a=o.get(c);a===void 0?o.set(c,[i]):a.push(i)}else r.push(i)}for(;r.length>0;){let i=r.pop();if(n.delete(i))for(let l of o.get(i)??[])r.push(l)}for(let[i,l]of s){let c=n.has(p(l.from)),a=n.has(p(l.to));c&&a||c&&ee(l)||s.delete(i)}return Q([...n.values()],[...s.values()],e.source,new Set,{allowDangling:ee})}function go(e){let t=new Map,n=new Map,s=new Map;for(let o of e)if(o.verb==="remove")t.set(p(o.fact.id),o.fact);else if(o.verb==="add")n.set(p(o.fact.id),o.fact);else if(o.verb==="set"){let r=p(o.id),i=s.get(r)??[];i.push(o),s.set(r,i)}return{removed:t,added:n,setsByFact:s}}function Li(e,t,n,s){if(t.has(n)||!t.has(s)||t.rollupOf(s)!==e.rollupOf(s))return!1;let o=new Set(me(e,s).map(p)),r=c=>c.edges.filter(a=>o.has(p(a.to))).map(a=>`${p(a.from)}-[${a.kind}]->${p(a.to)}`).sort(),i=r(e),l=r(t);return i.length===l.length&&i.every((c,a)=>c===l[a])}function ho(e,t,n,s){if(n?.policy&&Fr(n.policy),n?.policy?.baseline!==void 0&&n.baseline===void 0)throw new Error(`plan: policy "${n.policy.id}" declares baseline "${n.policy.baseline}" but no resolved baseline was provided. Resolve it with resolveBaseline(policy, { pgMajor }) and pass it as options.baseline, so platform facts are actually subtracted — a declared baseline is never silently ignored.`);let o=[],r=Ke(e,{policy:n?.policy,capability:n?.capability,baseline:n?.baseline,scope:n?.scope,defaultOwner:n?.defaultOwner,collectSuppression:$=>o.push({side:"source",suppression:$})}),i=Ke(t,{policy:n?.policy,capability:n?.capability,baseline:n?.baseline,scope:n?.scope,defaultOwner:n?.defaultOwner,collectSuppression:$=>o.push({side:"desired",suppression:$})}),l=Me(r,i),{kept:c}=n?.policy?nn(l,n.policy,r,i):{kept:l},{removed:a,added:u}=go(c),d=n?.renames??"off",f=[],m=[];if(d!=="off"){let $=Vr(a,u,r,i,s);f.push(...$);let H=new Set((n?.acceptRenames??[]).map(v=>`${p(v.from)}>${p(v.to)}`));for(let v of $){if(v.status!=="unambiguous")continue;let j=`${p(v.from)}>${p(v.to)}`;if(d==="prompt"&&!H.has(j))continue;let I=a.get(p(v.from)),C=u.get(p(v.to));m.push({from:I,to:C,sourceSubtree:me(r,v.from),desiredSubtree:me(i,v.to)})}}let E=fo(m),O=an(r,E),A=an(i,E),w=Me(O,A),{kept:N,filtered:L}=n?.policy?nn(w,n.policy,O,A):{kept:w,filtered:[]},b=mo(A,L),{removed:_,added:T,setsByFact:R}=go(N),k=m.filter(({from:$,to:H})=>{if($.id.kind==="role"&&H.id.kind==="role")return!0;let v=oe($.id,E),j=oe(H.id,E);return _.has(p(v))&&T.has(p(j))&&Li(A,b,v,j)});for(let{from:$,to:H}of k){if($.id.kind==="role"&&H.id.kind==="role")continue;let v=oe($.id,E),j=oe(H.id,E);for(let I of me(O,v))_.delete(p(I));for(let I of me(A,j))T.delete(p(I))}return{physicalSource:r,source:O,desired:A,projectedDesired:b,deltas:N,filteredDeltas:L,removed:_,added:T,setsByFact:R,renameCandidates:f,acceptedRenames:k,projectionSuppressions:o}}function Eo(e){let{removed:t,setsByFact:n,source:s,desired:o,rulesForId:r}=e,i=new Set,l=new Map;for(let[d,f]of n){let m=o.get(f[0].id),E=r(m.id);for(let O of f){let A=E.attributes[O.attr];if(A===void 0)throw new Error(`rule table: kind '${m.id.kind}' has no rule for attribute '${O.attr}' (${d}) — extend the rule vocabulary (guardrail 3)`);if(A==="replace"){i.add(d);continue}if(A.replaceWhen?.(O.from,O.to,m)){i.add(d);continue}let w=A.rebuildsDependents?.(O.from,O.to);w===!0?l.set(d,null):Array.isArray(w)&&l.set(d,new Set(w))}}{let d=new Set([...t.keys(),...i]),f=new Set([...d,...l.keys()]),m=[...f];for(;m.length>0;){let E=m.pop();for(let O of s.incomingEdgesByEncoded(E)){let A=p(O.from);if(f.has(A))continue;let w=s.get(O.from);if(!(!w||!o.has(O.from))&&Kr(w.id.kind)){if(!d.has(E)){let N=l.get(E);if(N&&!N.has(w.id.kind))continue}i.add(A),d.add(A),f.add(A),m.push(A)}}}for(let E of i){let A=s.getByEncoded(E)?.parent;for(;A!==void 0;){if(i.has(p(A))){i.delete(E);break}A=s.get(A)?.parent}}}let c=d=>{let f=p(d);return t.has(f)||i.has(f)},a=new Map,u=d=>{let f=p(d.id),m=a.get(f);if(m)return m;let E=f,O=r(d.id),A=O.suppressible?.(d)??!0,w=d.parent;if(w!==void 0&&A){let N=c(w),L=O.metadata===!0||bt(w.kind);N&&L&&(E=u(t.get(p(w))??s.get(w)))}return a.set(f,E),E};for(let d of t.values())u(d);for(let d of t.values()){let f=r(d.id).dropRootRedirect?.(d,c);if(f===void 0)continue;let m=p(f);a.set(p(d.id),a.get(m)??m)}return{replaceIds:i,dropRootOf:a}}var St="0.2.0";function bo(e,t,n){let s=t.diagnostics.filter(x=>x.code===Ls);if(s.length>0)throw new Error(`plan: the desired state declares intent the engine cannot key — name it so it can be managed:
`+s.map(x=>`  - ${x.message}`).join(`
`));let o=Zt(n?.intentRules),{physicalSource:r,source:i,desired:l,projectedDesired:c,deltas:a,filteredDeltas:u,removed:d,added:f,setsByFact:m,renameCandidates:E,acceptedRenames:O,projectionSuppressions:A}=ho(e,t,n,o),w=Yr(e,t,A),N=new Set,L=new Set,b=new Set;for(let x of[...e.diagnostics,...t.diagnostics]){if(x.code!==at||x.subject===void 0)continue;let P=x.subject;N.add(p(P)),L.add(P.server),P.role!=="PUBLIC"&&b.add(P.role)}if(N.size>0){let x=new Map;for(let P of a){let U=Be(P),K=p(U);if(N.has(K)){x.set(K,{id:U,relation:"mapping"});continue}if(P.verb==="remove"){U.kind==="server"&&L.has(U.name)?x.set(K,{id:U,relation:"server of an unreadable mapping"}):U.kind==="role"&&b.has(U.name)&&x.set(K,{id:U,relation:"role of an unreadable mapping"});continue}P.verb==="set"&&U.kind==="server"&&L.has(U.name)&&o(U).attributes[P.attr]==="replace"&&x.set(K,{id:U,relation:"server of an unreadable mapping (replaced)"})}if(x.size>0){let P=[...x.values()].map(({id:U,relation:K})=>{if(U.kind==="userMapping"){let ce=U;return`${ce.server}/${ce.role} (mapping)`}return`${U.name} (${K})`}).sort();throw new Error(`plan: the state of these user mappings is unknown on one side (options unreadable via pg_user_mappings) — refusing to plan changes touching them, their containing server, or their mapped role; extract with a role that can read pg_user_mapping:
`+P.map(U=>`  - ${U}`).join(`
`))}}let _=n?.params??{};for(let x of Object.keys(_))if(!Ce.has(x))throw new Error(`plan: unknown serialize parameter '${x}' — the rule table declares ${[...Ce].join(", ")}`);let T=n?.policy?Re(n.policy).serialize:[],R=new Set([...n?.policy?Re(n.policy).assumedRoles:[],...n?.assumedRoles??[]]);for(let x of[i,l])for(let P of x.edges)P.kind==="owner"&&P.to.kind==="role"&&!x.has(P.to)&&R.add(P.to.name);let k=new Set([...n?.policy?Re(n.policy).assumedSchemas:[],...n?.assumedSchemas??[]]),{replaceIds:$,dropRootOf:H}=Eo({removed:d,setsByFact:m,source:i,desired:l,rulesForId:o}),{actions:v,producerOf:j,destroyerOf:I,foldHints:C,acceptsFolds:B,renameActionIndices:D}=zr({source:i,desired:l,projectedDesired:c,removed:d,added:f,setsByFact:m,replaceIds:$,dropRootOf:H,acceptedRenames:O,deltas:a,params:_,serializeRules:T,capability:n?.capability,rulesForId:o}),{actions:M,safetyReport:F}=uo({actions:v,producerOf:j,destroyerOf:I,source:i,desired:l,renameActionIndices:D,foldHints:C,acceptsFolds:B,assumedRoleNames:R,assumedSchemaNames:k,capability:n?.capability,compact:n?.compact!==!1,foldConstraints:n?.foldConstraints,rulesForId:o});return{formatVersion:1,engineVersion:St,source:{fingerprint:r.rootHash},target:{fingerprint:c.rootHash},preamble:[{name:"search_path",value:"pg_catalog"},...n?.compact===!1||po(M)?[{name:"check_function_bodies",value:"off"}]:[]],deltas:a,filteredDeltas:u,projectionAudit:w,...n?.policy?{policy:n.policy}:{},...n?.capability?{capability:n.capability}:{},...n?.profile?{profile:n.profile}:{},...n?.baselineMeta?{baseline:n.baselineMeta}:{},...n?.scope!==void 0&&n.scope!=="cluster"?{scope:n.scope}:{},...n?.defaultOwner!==void 0&&n?.scope!==void 0&&n.scope!=="cluster"?{defaultOwner:n.defaultOwner}:{},...n?.redactSecrets!==void 0?{redactSecrets:n.redactSecrets}:{},renameCandidates:E,...O.length>0?{acceptedRenames:O.map(x=>({from:x.from.id,to:x.to.id}))}:{},actions:M,safetyReport:F}}function $i(e){return e.kind==="table"||e.kind==="materializedView"||e.kind==="column"||e.kind==="typeAttribute"}var Ci=new Set(["table","view","materializedView","foreignTable"]);function ln(e){return Ci.has(e.kind)}function yt(e,t){let{from:n,to:s}=t;if(n.kind===s.kind){if(p(e)===p(n))return s;if(e.kind==="comment"){let o=yt(e.target,t);return o===void 0?void 0:{...e,target:o}}if(e.kind==="acl"){let o=yt(e.target,t);return o===void 0?void 0:{...e,target:o}}if(e.kind==="securityLabel"){let o=yt(e.target,t);return o===void 0?void 0:{...e,target:o}}if(n.kind==="schema"&&s.kind==="schema")return!("schema"in e)||e.schema!==n.name?void 0:{...e,schema:s.name};if(ln(n)&&ln(s)&&"schema"in e&&"table"in e)return e.schema!==n.schema||e.table!==n.name?void 0:{...e,schema:s.schema,table:s.name};if(n.kind==="type"&&s.kind==="type"&&e.kind==="typeAttribute")return e.schema!==n.schema||e.type!==n.name?void 0:{...e,schema:s.schema,type:s.name}}}function ki(e,t=[]){let n=[],s=new Set;return e.forEach((o,r)=>{let i=new Set(o.destroys.map(p)),l=new Set(o.produces.map(p));for(let c of t)if(!(!i.has(p(c.from))||!l.has(p(c.to))))for(let a of o.destroys){let u=yt(a,c);if(u===void 0||!l.has(p(u)))continue;let d=`${r}:${p(a)}:${p(u)}`;s.has(d)||(s.add(d),n.push({actionIndex:r,from:a,to:u}))}}),n}function xi(e,t){return e.kind==="column"?t.destroys.some(n=>ln(n)&&n.schema===e.schema&&n.name===e.table):e.kind==="typeAttribute"?t.destroys.some(n=>n.kind==="type"&&n.schema===e.schema&&n.name===e.type):!1}function vi(e,t=[]){let n=[],s=ki(e,t);return e.forEach((o,r)=>{if(o.dataLoss!=="destructive")for(let i of o.destroys)!$i(i)||xi(i,o)||s.some(c=>c.actionIndex===r&&c.from.kind===i.kind&&p(c.from)===p(i))||n.push({actionIndex:r,relation:i})}),n}function So(e,t=[],n="plan"){let s=vi(e,t);if(s.length===0)return;let o=s[0];throw new Error(`${n}: action[${o.actionIndex}] destroys intrinsically data-bearing object ${p(o.relation)} but declares dataLoss:none`)}function dn(e,t,n){let s=n?"LOCAL ":"";return[...t?.lockTimeoutMs!==void 0?[`SET ${s}lock_timeout = ${t.lockTimeoutMs}`]:[],...t?.statementTimeoutMs!==void 0?[`SET ${s}statement_timeout = ${t.statementTimeoutMs}`]:[],...e.preamble.map(o=>`SET ${s}${o.name} = ${o.value}`)]}function Di(e){let t=[],n=0;for(let s=0;s<e.length;s++){let o=e[s];o.transactionality==="nonTransactional"?(s>n&&t.push({start:n,end:s,transactional:!0}),t.push({start:s,end:s+1,transactional:!1}),n=s+1):o.transactionality==="commitBoundaryAfter"?(t.push({start:n,end:s+1,transactional:!0}),n=s+1):o.newSegmentBefore&&s>n&&(t.push({start:n,end:s,transactional:!0}),n=s)}return n<e.length&&t.push({start:n,end:e.length,transactional:!0}),t}function ze(e,t,n,s){return{actionIndex:e,statementKind:t,sql:n,message:s instanceof Error?s.message:String(s)}}function V(e,t){if(e!==void 0)try{let n=e(t);n!==null&&(typeof n=="object"||typeof n=="function")&&typeof n.then=="function"&&Promise.resolve(n).catch(()=>{})}catch{}}async function yo(e,t,n){if(e.formatVersion!==1)throw new Error(`apply: unsupported plan formatVersion ${String(e.formatVersion)}`);if(e.engineVersion!==St)throw new Error(`apply: plan was produced by engine ${e.engineVersion}, this engine is ${St} — re-plan`);if(So(e.actions,e.acceptedRenames,"apply"),n?.fingerprintGate!==!1){if(e.policy?.baseline!==void 0&&n?.baseline===void 0)throw new Error(`apply: plan was produced with policy "${e.policy.id}" declaring baseline "${e.policy.baseline}", but no baseline was supplied to reconstruct the fingerprint gate. Pass the resolved baseline as options.baseline, or skip the gate with fingerprintGate:false if convergence was already proven.`);let c=await(n?.reextract?n.reextract(t):lt(t,{redactSecrets:e.redactSecrets??!0})),a=Ke(c.factBase,{policy:e.policy,capability:e.capability,baseline:n?.baseline,scope:e.scope,defaultOwner:e.defaultOwner});if(a.rootHash!==e.source.fingerprint)throw new Error(`apply: fingerprint gate failed — the target's resolved state (${a.rootHash.slice(0,12)}…) is not the plan's source (${e.source.fingerprint.slice(0,12)}…); re-plan against the current state`)}let s=e.actions.map(()=>"unapplied"),o=Di(e.actions),r=0,i=await t.connect(),l=!1;try{let c=n?.onEvent;for(let a=0;a<o.length;a++){let u=o[a];if(V(c,{kind:"segmentStart",segmentIndex:a,segmentCount:o.length,start:u.start,end:u.end,transactional:u.transactional}),!u.transactional){let f=u.start,m=e.actions[f],E,O="control",A="";try{for(let b of dn(e,n,!1))O="control",A=b,V(c,{kind:"control",sql:b}),await i.query(b);O="action",A=m.sql,V(c,{kind:"actionStart",actionIndex:f,sql:m.sql});let L=performance.now();try{await i.query(m.sql);let b=performance.now()-L;V(c,{kind:"actionEnd",actionIndex:f,ok:!0,ms:b})}catch(b){let _=performance.now()-L;throw V(c,{kind:"actionEnd",actionIndex:f,ok:!1,ms:_}),b}}catch(L){O==="action"&&(s[f]="inDoubt"),E=ze(f,O,A,L)}V(c,{kind:"control",sql:"RESET ALL"});let w=!1,N;try{await i.query("RESET ALL")}catch(L){w=!0,N=L,l=!0}if(E!==void 0)return V(c,{kind:"segmentEnd",segmentIndex:a,outcome:E.statementKind==="action"?"inDoubt":"failed"}),{status:"failed",appliedActions:r,actionStatuses:s,error:E};if(s[f]="applied",r+=1,w)return V(c,{kind:"segmentEnd",segmentIndex:a,outcome:"failed"}),{status:"failed",appliedActions:r,actionStatuses:s,error:ze(f,"control","RESET ALL",N)};V(c,{kind:"segmentEnd",segmentIndex:a,outcome:"committed"});continue}let d="BEGIN";try{V(c,{kind:"control",sql:"BEGIN"}),await i.query("BEGIN");for(let f of dn(e,n,!0))d=f,V(c,{kind:"control",sql:f}),await i.query(f)}catch(f){V(c,{kind:"control",sql:"ROLLBACK"});try{await i.query("ROLLBACK")}catch{l=!0}return V(c,{kind:"segmentEnd",segmentIndex:a,outcome:"failed"}),{status:"failed",appliedActions:r,actionStatuses:s,error:ze(u.start,"control",d,f)}}for(let f=u.start;f<u.end;f++){let m=e.actions[f];V(c,{kind:"actionStart",actionIndex:f,sql:m.sql});let E=performance.now();try{await i.query(m.sql)}catch(A){let w=performance.now()-E;V(c,{kind:"actionEnd",actionIndex:f,ok:!1,ms:w}),V(c,{kind:"control",sql:"ROLLBACK"});let N=!0;try{await i.query("ROLLBACK")}catch{N=!1,l=!0}return V(c,{kind:"segmentEnd",segmentIndex:a,outcome:N?"rolledBack":"failed"}),{status:"failed",appliedActions:r,actionStatuses:s,error:ze(f,"action",m.sql,A)}}let O=performance.now()-E;V(c,{kind:"actionEnd",actionIndex:f,ok:!0,ms:O})}try{V(c,{kind:"control",sql:"COMMIT"}),await i.query("COMMIT")}catch(f){for(let m=u.start;m<u.end;m++)s[m]="inDoubt";V(c,{kind:"control",sql:"ROLLBACK"});try{await i.query("ROLLBACK")}catch{l=!0}return V(c,{kind:"segmentEnd",segmentIndex:a,outcome:"inDoubt"}),{status:"failed",appliedActions:r,actionStatuses:s,error:ze(u.start,"control","COMMIT",f)}}for(let f=u.start;f<u.end;f++)s[f]="applied";r+=u.end-u.start,V(c,{kind:"segmentEnd",segmentIndex:a,outcome:"committed"})}}finally{l?i.release(!0):i.release()}return{status:"applied",appliedActions:r,actionStatuses:s}}function un(e,t,n,s){let o={async query(r,i){await n?.before(r,t);let l=await e.query(r,i);return s&&/^BEGIN ISOLATION LEVEL REPEATABLE READ/i.test(r)&&await e.query(s),l},release(){}};return{connect:async()=>o}}async function pn(e){let t=await lt(e),n=t.diagnostics.filter(r=>r.code==="unmodeled_kind").map(r=>{let i=r.context??{};return{kind:String(i.kind),count:Number(i.count??1),samples:(i.samples??[]).map(String)}}),s=new Set,o=new Set;for(let r of t.factBase.edges)r.to.kind==="role"&&(s.add(r.to.name),r.kind==="owner"&&o.add(r.to.name));for(let r of t.factBase.facts())for(let i of Mi(r))s.add(i);return{facts:t.factBase,unmodeled:n,roles:[...s].sort(),owners:[...o].sort()}}function Mi(e){let t=e.id;return t.kind==="acl"?t.grantee&&t.grantee!=="PUBLIC"?[t.grantee]:[]:t.kind==="defaultPrivilege"?[t.role,t.grantee].filter(n=>!!n&&n!=="PUBLIC"):[]}function Bi(e,t){let n=new Set(t.present),s=l=>t.privileges==="kept"&&(!l||l==="PUBLIC"||n.has(l)),o=new Map;for(let l of e.edges)l.kind==="owner"&&o.set(p(l.from),l.to.name);let r=e.facts().filter(l=>{let c=l.id;return c.kind==="acl"?s(c.grantee)&&!qi(l,o,t.self):c.kind==="defaultPrivilege"?s(c.role)&&s(c.grantee):!0}),i=[];for(let l of e.edges){if(l.kind==="owner"&&!s(l.to.name))continue;i.push(l);let c=l.from;l.kind==="depends"&&c.kind==="column"&&(l.to.kind==="domain"||l.to.kind==="type")&&i.push({from:{kind:"table",schema:c.schema,name:c.table},to:l.to,kind:"depends"})}return Q(r,i,e.source)}function qi(e,t,n){let s=e.id;if(!s.target||s.grantee!==(t.get(p(s.target))??n))return!1;let o=e.payload,r=(i=[],l=[])=>i.length===l.length&&i.every(c=>l.includes(c));return o._ownerDefault!==void 0&&r(o.privileges,o._ownerDefault)&&!(o.grantable??[]).length}var Ao=new Set(["p","u","x","f"]);function _o(e,t,n){let s=Bi(e.facts,n),o=new Set(s.facts().filter(f=>f.id.kind==="constraint"&&Ao.has(String(f.payload.type))).map(f=>p(f.id))),r=n.present.filter(f=>f!==n.self),i=bo(t,s,{scope:"database",defaultOwner:n.self,assumedRoles:[n.self,...r],foldConstraints:{exclude:o}});Fi(i.actions);let l=new Set,c=[],a=[],u=[],d=[];for(let f of i.actions){if(f.produces.some(E=>E.kind==="defaultPrivilege")){u.push(f);continue}let m=f.produces.some(E=>Pi(E,s))||/\b(ENABLE|FORCE) ROW LEVEL SECURITY\b/.test(f.sql)||[...f.consumes,...f.produces.flatMap(E=>ji(s,E))].some(E=>l.has(p(E)));if(m)for(let E of f.produces)l.add(p(E));(m?a:c).push(f);for(let E of f.produces)E.kind==="materializedView"&&d.push(E)}return{plan:i,beforeRows:c,afterRows:a,matviews:d,last:u}}function Pi(e,t){if(["index","trigger","policy","rule"].includes(e.kind))return!0;if(e.kind!=="constraint")return!1;let n=t.get(e);return Ao.has(String(n?.payload.type))||n?.payload.validated===!1}function ji(e,t){let n=e.get(t);return[...e.outgoingEdges(t).map(s=>s.to),...n?.parent?[n.parent]:[]]}function Fi(e){let t=e.find(n=>[...n.produces,...n.destroys,...n.releases].some(s=>s.kind==="role"||s.kind==="membership")||/^\s*(CREATE|ALTER|DROP)\s+(ROLE|USER|GROUP)\b/i.test(n.sql));if(t)throw new ve("TEMPLATE_FAILED",`The copy's schema plan holds a statement pgx never runs in a copy: ${t.sql.slice(0,120)}`,"Nothing was changed. Install pg_dump of at least the server version (pgx then copies with it), and report this.")}async function At(e,t,n,s=[]){if(!t.length)return;let o=await yo({...e,actions:t,preamble:[...e.preamble,...s]},n,{fingerprintGate:!1});if(o.status!=="applied"){let r=o.error;throw new ve("TEMPLATE_FAILED",`The copy's schema could not be created: ${r?.message??"unknown error"} (at: ${(r?.sql??"").slice(0,160)})`,"Nothing of the copy is kept. Install pg_dump of at least the server version (pgx then copies with it), or report the statement.")}}var Hi=new Set(["statistics object"]);function Wi(){let e=Number(process.env.PGX_COPY_JOBS);return Number.isInteger(e)&&e>0?e:Math.max(1,Math.min(4,Ui()))}async function uu(e,t,n={}){let s=[],o=async i=>{let l=await mn({...i,statementTimeoutMs:void 0},{gate:n.gate});return s.push(l),l},r=n.progress??(()=>{});try{let i=performance.now(),l=await o(e);await l.db.query(_t),await l.db.query(Ot);let c=await En(l.db),a=await bn(l.db);a.length&&await l.db.query(Sn(a)),r("reading the schema …");let[u,d]=await Promise.all([o(e),o(t)]),f=un(d.client,d.db,n.gate),[m,E]=await Promise.all([pn(un(u.client,u.db,n.gate,Nt(c))),pn(f)]);Yi(m.unmodeled.filter(D=>!Hi.has(D.kind))),await n.prepareRoles?.(m.roles);let O=t.user,A=await Bn(d.db,[...m.roles,O]),w=await qn(d.db,m.owners.filter(D=>A.has(D)&&D!==O)),N=w.length?"dropped":"kept",L=_o(m,E.facts,{self:O,present:[...A],privileges:N}),b=[],_=m.roles.filter(D=>!A.has(D));_.length&&b.push(`role(s) ${_.join(", ")} do not exist on this server: their objects are owned by "${O}" instead, and their grants are left out`),N==="dropped"&&b.push(`"${O}" may not make role(s) ${w.join(", ")} an owner: every object is owned by "${O}", with no GRANT (as pg_dump --no-owner --no-privileges)`),r(`creating the schema (${L.beforeRows.length} statements) …`),await At(L.plan,L.beforeRows,f),b.push(...await Gi(l,d));let T=m.facts.facts().filter(D=>D.id.kind==="userMapping"||D.id.kind==="subscription");T.length&&b.push(`${T.length} user mapping(s) or subscription(s) are copied with their secret options redacted (passwords, connection strings): set them again in the copy where it needs them`);for(let D of await On(l.db))b.push(`the rows of extension configuration table ${D} are not copied (its extension's own rows are there)`);let R=performance.now(),k=Math.max(1,Math.min(n.jobs??Wi(),a.length)),$=[{reader:u,writer:d}];for(await Oo(u,c);$.length<k;){let D=await o(e);await Oo(D,c),$.push({reader:D,writer:await o(t)})}let H=Math.floor(l.db.serverVersionNum/1e4)===Math.floor(d.db.serverVersionNum/1e4),v=a.reduce((D,M)=>D+M.bytes,0),j=await us(a,$,{binary:H,gate:n.gate,progress:D=>r(`copying rows: ${D.tables}/${a.length} tables, ${No(D.bytes)} of ~${No(v)} MB`)}),I=a.filter(D=>H&&D.binary).length,C=performance.now();r(`building indexes and keys (${L.afterRows.length} statements) …`),await At(L.plan,L.afterRows,f,[{name:"maintenance_work_mem",value:"'256MB'"}]);let B=await Hn(l.db,d.db,{self:O,keepOwners:N==="kept",matviews:L.matviews,present:A});return await At(L.plan,L.last,f),await l.db.query("COMMIT"),{method:"node-copy",privileges:N,roles_missing:_,statements:L.beforeRows.length+L.afterRows.length+L.last.length,...j,format:I===a.length?"binary":I===0?"text":"mixed",after_rows:B,warnings:b,source_sessions:1+$.length,elapsed_ms:{schema:fn(R-i),rows:fn(C-R),after_rows:fn(performance.now()-C)}}}finally{await Promise.all(s.map(i=>i.db.close()))}}async function Oo(e,t){await e.db.query(_t),await e.db.query(Nt(t)),await e.db.query(Ot)}function Yi(e){if(!e.length)return;let t=e.map(n=>`${n.count} ${n.kind}${n.samples.length?` (${n.samples.slice(0,3).join(", ")})`:""}`);throw new ve("TEMPLATE_FAILED",`The database holds objects the Node copy does not carry: ${t.join("; ")}.`,"Install pg_dump and psql of at least the server major version (e.g. apt-get install postgresql-client-<major>, or set PGX_PG_BINDIR to their directory): pgx then copies with them. Nothing was kept.")}async function Gi(e,t){let[n,s]=await Promise.all([Rt(e.db),Rt(t.db)]),o=[...n].filter(([r,i])=>s.has(r)&&s.get(r)!==i).map(([r])=>r);return o.length?[`the columns of ${o.join(", ")} are in another order than in the source (SELECT * lists them so)`]:[]}var No=e=>(e/1048576).toFixed(0),fn=e=>Math.round(e);export{Wi as defaultJobs,uu as nodeCopy};
