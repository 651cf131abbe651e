// Replaces pg/lib/crypto/utils.js in the bundle (scripts/build.mjs): the same functions on node:crypto instead of
// WebCrypto. Loading WebCrypto (webidl) and running PBKDF2 through it cost ~23 ms per SCRAM login, on every hook and
// exec; node:crypto's pbkdf2Sync does the 4096 iterations in ~3 ms. Signatures and results are pg's (promises of
// byte buffers), so pg/lib/crypto/sasl.js is unchanged.
'use strict';
const nodeCrypto = require('crypto');

// The broker logs in again and again with the same password against the same role's salt: the 4096 PBKDF2
// iterations (~3 ms of blocked event loop each) are done once per (password, salt, iterations). A one-shot hook
// process never hits it. The key stays in this process's memory, where the password already is.
const derived = new Map();
const MAX_DERIVED = 32;
function deriveKeyOnce(password, salt, iterations) {
  const k = `${iterations}:${Buffer.from(salt).toString('base64')}:${password}`;
  let key = derived.get(k);
  if (!key) {
    key = nodeCrypto.pbkdf2Sync(password, salt, iterations, 32, 'sha256');
    if (derived.size >= MAX_DERIVED) derived.delete(derived.keys().next().value);
    derived.set(k, key);
  }
  return key;
}

module.exports = {
  postgresMd5PasswordHash: async (user, password, salt) => {
    const inner = nodeCrypto
      .createHash('md5')
      .update(password + user, 'utf-8')
      .digest('hex');
    return (
      'md5' +
      nodeCrypto
        .createHash('md5')
        .update(Buffer.concat([Buffer.from(inner), salt]))
        .digest('hex')
    );
  },
  randomBytes: (length) => nodeCrypto.randomBytes(length),
  deriveKey: async (password, salt, iterations) => deriveKeyOnce(password, salt, iterations),
  sha256: async (data) => nodeCrypto.createHash('sha256').update(data).digest(),
  hashByName: async (hashName, data) =>
    nodeCrypto.createHash(hashName.replace('-', '').toLowerCase()).update(data).digest(),
  hmacSha256: async (key, msg) => nodeCrypto.createHmac('sha256', Buffer.from(key)).update(msg).digest(),
  md5: async (s) => nodeCrypto.createHash('md5').update(s, 'utf-8').digest('hex'),
};
