// What makes a column look personal: its name (email, phone, name, address, birth date, tax id, card, iban, token,
// secret, password, ip …) or a sampled value (an address outside the reserved example domains, a phone number, a card
// number passing Luhn, a JWT, a well-known API key prefix, an IP address). Pure functions over names and strings:
// the scan (scan.ts) feeds them the catalog and a sample; tests feed them strings.

/** A reason a column looks personal, and the strategy a rule would most likely use. */
export interface Sign {
  why: string;
  suggest: string;
}

/** A name that holds one of these words (regex alternatives, `|`-separated), delimited by `_` or the name's ends. */
const word = (alternatives: string) => new RegExp(`(^|_)(${alternatives})($|_)`);

const PERSON_TABLE = word(
  'users?|customers?|clients?|persons?|people|members?|employees?|staff|contacts?' +
    '|patients?|accounts?|authors?|owners?|profiles?|subscribers?|students?|candidates?' +
    '|applicants?|guests?|leads?|recipients?|signups?',
);

const NAME_RULES: [RegExp, string, string][] = [
  [/(^|_)(e_?mail|mail)(_?(address|addr))?($|_)/, 'an email address', 'email'],
  [
    /(^|_)(ip|ip_?addr(ess)?|ipv[46]|remote_?addr(ess)?|client_?ip|last_?(sign_?in_?|login_?)?ip|current_?(sign_?in_?)?ip)($|_)/,
    'an IP address',
    'ip',
  ],
  [/(^|_)(phone|mobile|cell|tel|telephone|fax|msisdn)(_?(number|no|num))?($|_)/, 'a phone number', 'phone'],
  [/(^|_)(first_?name|given_?name|forename)($|_)/, 'a first name', 'first_name'],
  [/(^|_)(last_?name|family_?name|surname|maiden_?name)($|_)/, 'a last name', 'last_name'],
  [
    word(
      'full_?name|middle_?name|display_?name|user_?name|nick_?name|legal_?name|real_?name' +
        '|contact_?name|customer_?name|billing_?name|shipping_?name|holder_?name|card_?holder|login',
    ),
    "a person's name",
    'name',
  ],
  [/(^|_)(birth|birthday|birth_?date|dob|date_?of_?birth|born(_?(on|at))?)($|_)/, 'a birth date', 'date_shift:180'],
  [
    word(
      'ssn|sin|social_?security(_?number)?|tax_?(id|number|no)|tin|vat_?(id|number|no)' +
        '|national_?id|nin|passport(_?(no|number))?|driver_?s?_?licen[cs]e(_?(no|number))?|id_?card(_?number)?',
    ),
    'a tax or identity number',
    'hash',
  ],
  [
    /(^|_)(card_?(number|no|num)|cc_?(number|num|no)?|credit_?card|pan|cvv|cvc|card_?pan)($|_)/,
    'a payment card number',
    'partial',
  ],
  [
    /(^|_)(iban|bic|swift(_?code)?|account_?(number|no)|routing_?(number|no)|bank_?account|sort_?code)($|_)/,
    'a bank account',
    'hash',
  ],
  [
    word(
      'password|passwd|pwd|pass_?hash|password_?digest|encrypted_?password|token|secret' +
        '|api_?key|apikey|access_?key|private_?key|secret_?key|client_?secret|refresh_?token' +
        '|access_?token|auth_?token|session_?(id|token|key)|otp(_?secret)?|mfa_?secret|totp_?secret' +
        '|recovery_?codes?|salt',
    ),
    'a secret (password, token or key)',
    'null',
  ],
  [
    /(^|_)(address|addr|street|street_?address|address_?line_?\d*|postal_?code|postcode|zip|zip_?code)($|_)/,
    'a postal address',
    'hash',
  ],
  [/(^|_)(lat|lng|lon|latitude|longitude|geo_?location|coordinates)($|_)/, 'a location', 'null'],
];

/** Splits camelCase and separators into snake_case words: "billingEmailAddress" → "billing_email_address". */
export const snake = (name: string) =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_');

/** The signs a column's name gives (the first rule that matches, so "email_address" is an email, not an address). */
export function nameSign(table: string, column: string): Sign | undefined {
  const n = snake(column);
  for (const [re, what, suggest] of NAME_RULES) if (re.test(n)) return { why: `its name says ${what}`, suggest };
  if (n === 'name' && PERSON_TABLE.test(snake(table)))
    return { why: 'its name says a person\'s name (a "name" column of a table of people)', suggest: 'name' };
  return undefined;
}

const RESERVED_DOMAIN = /(^|\.)(example\.(com|net|org)|example|test|invalid|localhost)$/i;
const EMAIL = /^[^\s@<>()]+@([a-z0-9-]+(\.[a-z0-9-]+)+)$/i;
const EMAIL_IN = /[a-z0-9._%+-]+@([a-z0-9-]+(\.[a-z0-9-]+)+)/gi;
const JWT = /^eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*$/;
const JWT_IN = /eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]+/;
/** Well-known API key shapes; the first ones (and OpenAI's and Anthropic's sk-) are also looked for inside longer text. */
const KEYS_IN_TEXT =
  /(sk|pk|rk)_(live|test)_[A-Za-z0-9]{10,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|xox[abposr]-[\w-]{10,}|AKIA[0-9A-Z]{16}/;
const SK = /sk-(ant-|proj-)?[\w-]{20,}/;
const MORE_KEYS = /glpat-[\w-]{20}|SG\.[\w-]{16,}\.[\w-]{16,}|npm_[A-Za-z0-9]{30,}|shp(at|ss|ca|pa)_[a-fA-F0-9]{32}/;
const API_KEY = new RegExp(`^(${KEYS_IN_TEXT.source}|AIza[\\w-]{30,}|${SK.source}|${MORE_KEYS.source})$`);
const API_KEY_IN = new RegExp(`\\b(${KEYS_IN_TEXT.source}|${SK.source})`);
const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(\/\d{1,2})?$/;
const IPV6 = /^[0-9a-f]{0,4}(:[0-9a-f]{0,4}){2,7}(\/\d{1,3})?$/i;
const IBAN = /^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/;

const reservedEmail = (domain: string) => RESERVED_DOMAIN.test(domain);

export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

function ipv4Personal(v: string): boolean {
  const m = IPV4.exec(v);
  if (!m || [m[1], m[2], m[3], m[4]].some((x) => Number(x) > 255)) return false;
  const [a, b, c] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const documentation =
    (a === 192 && b === 0 && c === 2) || (a === 198 && b === 51 && c === 100) || (a === 203 && b === 0 && c === 113);
  return !documentation && a !== 127 && a !== 0;
}

/** What kind of personal value a whole value is, if any. */
export function valueKind(raw: string): string | undefined {
  const v = raw.trim();
  if (v.length < 5 || v.length > 2000) return undefined;
  const email = EMAIL.exec(v);
  if (email) return reservedEmail(email[1]!) ? undefined : 'email addresses outside the reserved example domains';
  if (JWT.test(v)) return 'JWTs';
  if (API_KEY.test(v)) return 'API keys (a well-known prefix)';
  if (ipv4Personal(v) || (IPV6.test(v) && !/^2001:db8:/i.test(v) && v !== '::1' && !/^[\d:.]+$/.test(v)))
    return 'IP addresses';
  const digits = v.replace(/[\s-]/g, '');
  if (/^\d{13,19}$/.test(digits) && /^[\d\s-]+$/.test(v) && luhn(digits) && !/^(\d)\1+$/.test(digits))
    return 'card numbers (they pass the Luhn check)';
  if (IBAN.test(v.replace(/\s/g, '')) && /^[A-Z]{2}\d{2}/.test(v)) return 'IBANs';
  if (/^\+?\(?\d[\d\s().-]{6,}\d$/.test(v) && !/^\d{4}-\d{2}-\d{2}/.test(v) && !/^\+1 555 /.test(v)) {
    const n = v.replace(/\D/g, '').length;
    const separated = v.startsWith('+') || /[\s()-]/.test(v);
    if (n >= 8 && n <= 15 && separated && !/^\d+\.\d+$/.test(v)) return 'phone numbers';
  }
  return undefined;
}

/** What kind of personal value appears anywhere in a longer text (a json document): emails, JWTs, API keys. */
export function embeddedKind(text: string): string | undefined {
  for (const m of text.matchAll(EMAIL_IN))
    if (!reservedEmail(m[1]!)) return 'email addresses outside the reserved example domains';
  if (JWT_IN.test(text)) return 'JWTs';
  if (API_KEY_IN.test(text)) return 'API keys (a well-known prefix)';
  return undefined;
}

const SUGGEST_FOR_VALUE: Record<string, string> = {
  'email addresses outside the reserved example domains': 'email',
  JWTs: 'null',
  'API keys (a well-known prefix)': 'null',
  'IP addresses': 'ip',
  'card numbers (they pass the Luhn check)': 'partial',
  IBANs: 'hash',
  'phone numbers': 'phone',
};

export const suggestionFor = (kind: string) => SUGGEST_FOR_VALUE[kind] ?? 'hash';

/** The paths of a json value whose leaves look personal (by key name or value), each with the strategy to suggest. */
export function jsonPaths(doc: unknown, prefix: string[] = [], out = new Map<string, string>()): Map<string, string> {
  if (doc && typeof doc === 'object' && !Array.isArray(doc)) {
    for (const [k, v] of Object.entries(doc as Record<string, unknown>)) {
      const path = [...prefix, k];
      if (v && typeof v === 'object') jsonPaths(v, path, out);
      else if (typeof v === 'string' || typeof v === 'number') {
        const byName = nameSign('', k);
        const byValue = typeof v === 'string' ? valueKind(v) : undefined;
        const s = byValue ? suggestionFor(byValue) : byName?.suggest;
        if (s && !out.has(path.join('.')))
          out.set(path.join('.'), s === 'date_shift:180' || s === 'partial' ? 'hash' : s);
      }
    }
  }
  return out;
}
