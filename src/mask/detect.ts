// What makes a column look personal: its name (email, phone, name, address, birth date, tax id, card, iban, token,
// secret, password, ip …) or a sampled value (an address outside the reserved example domains, a phone number, a card
// number passing Luhn, a JWT, a well-known API key prefix, an IP address). Pure functions over names and strings:
// the scan (scan.ts) feeds them the catalog and a sample; tests feed them strings.

/** A reason a column looks personal, and the strategy a rule would most likely use. */
export interface Sign {
  why: string;
  suggest: string;
}

/** What kind of value a column's type holds, for the name rules (an `email_verified` boolean is not an email). */
export type TypeClass = 'text' | 'array' | 'json' | 'number' | 'date' | 'blob' | 'net' | 'geo' | 'uuid' | 'other';

/** A column as the name rules see it: its type's class, and whether it is a key (primary, foreign, sequence-fed). */
export interface ColumnShape {
  cls: TypeClass;
  key: boolean;
}

/** A name that holds one of these words (regex alternatives, `|`-separated), delimited by `_` or the name's ends. */
const word = (alternatives: string) => new RegExp(`(^|_)(${alternatives})($|_)`);
/** A name that ends with one of these words, then maybe a number or a qualifier (`home_phone`, `email2`, `phone_work`). */
const ending = (alternatives: string) =>
  new RegExp(
    `(^|_)(${alternatives})(_?\\d+)?(_(home|work|office|mobile|personal|primary|secondary|alt|other|backup))?$`,
  );

const PERSON_TABLE = word(
  'users?|customers?|clients?|persons?|people|members?|employees?|staff|contacts?' +
    '|patients?|accounts?|authors?|owners?|profiles?|subscribers?|students?|candidates?' +
    '|applicants?|guests?|leads?|recipients?|signups?|passengers?|travell?ers?|donors?|volunteers?|teachers?' +
    '|residents?|voters?|buyers?|riders?|drivers?|players?|attendees?|participants?|respondents?|borrowers?|visitors?',
);

interface NameRule {
  re: RegExp;
  what: string;
  suggest: string;
  /** The type classes a column of this name holds personal data in (others: not by name). */
  on: TypeClass[];
  /** Still personal when the name ends in id/key/ref (`tax_id`, `api_key`, `device_id`); else such a name is a reference. */
  identifier?: boolean;
}

const TEXTUAL: TypeClass[] = ['text', 'array', 'json'];

const NAME_RULES: NameRule[] = [
  { re: ending('e_?mails?|mail|e_?mail_?(address|addr)'), what: 'an email address', suggest: 'email', on: TEXTUAL },
  {
    re: /(^|_)(ip|ip_?addr(ess)?|ipv[46]|remote_?addr(ess)?|client_?ip|last_?(sign_?in_?|login_?)?ip|current_?(sign_?in_?)?ip)(_?\d+)?($|_)/,
    what: 'an IP address',
    suggest: 'ip',
    on: [...TEXTUAL, 'net'],
  },
  {
    re: word('device_?id|imei|mac_?addr(ess)?|advertising_?id|idfa|gaid|udid'),
    what: 'a device identifier',
    suggest: 'hash',
    on: TEXTUAL,
    identifier: true,
  },
  {
    re: ending(
      'phone|mobile|cell_?phone|cell|tel|telephone|fax|msisdn|whatsapp|(phone|mobile|fax|tel)_?(number|no|num|nr)',
    ),
    what: 'a phone number',
    suggest: 'phone',
    on: [...TEXTUAL, 'number'],
  },
  { re: word('first_?name|given_?name|forename|fname'), what: 'a first name', suggest: 'first_name', on: TEXTUAL },
  {
    re: word('last_?name|family_?name|surname|maiden_?name|lname'),
    what: 'a last name',
    suggest: 'last_name',
    on: TEXTUAL,
  },
  {
    re: /(^|_)(user_?name|login(_?name)?|nick_?name|screen_?name|handle_?name)$/,
    what: 'a username',
    suggest: 'username',
    on: TEXTUAL,
  },
  {
    re: word(
      'full_?name|middle_?name|display_?name|legal_?name|real_?name|person_?name|contact_?name|contact_?person' +
        '|customer_?name|client_?name|employee_?name|patient_?name|billing_?name|shipping_?name|recipient_?name' +
        '|sender_?name|holder_?name|card_?holder|account_?holder|spouse_?name|guardian_?name|emergency_?contact' +
        '|next_?of_?kin',
    ),
    what: "a person's name",
    suggest: 'name',
    on: TEXTUAL,
  },
  {
    re: word('birth|birthday|birth_?date|dob|date_?of_?birth|born(_?(on|at))?'),
    what: 'a birth date',
    suggest: 'date_shift:180',
    on: ['date', 'text', 'json'],
  },
  {
    re: word(
      'ssn|sin|social_?security(_?number)?|tax_?(id|number|no|code)|tin|vat_?(id|number|no)|national_?id(_?number)?' +
        '|nin|nino|national_?insurance(_?number)?|passport(_?(id|no|number))?|driver_?s?_?licen[cs]e(_?(id|no|number))?' +
        '|id_?card(_?number)?|cpf|aadhaar|nhs_?number|medicare_?number|health_?insurance_?number',
    ),
    what: 'a tax or identity number',
    suggest: 'hash',
    on: ['text', 'json', 'number'],
    identifier: true,
  },
  {
    re: word('card_?(number|no|num)|cc_?(number|num|no)?|credit_?card|pan|cvv|cvc|card_?pan'),
    what: 'a payment card number',
    suggest: 'partial',
    on: ['text', 'json', 'number'],
  },
  {
    re: word('iban|bic|swift(_?code)?|account_?(number|no)|routing_?(number|no)|bank_?account|sort_?code'),
    what: 'a bank account',
    suggest: 'hash',
    on: ['text', 'json', 'number'],
  },
  {
    re: word(
      'password|passwd|pwd|pass_?hash|password_?digest|encrypted_?password|token|secret' +
        '|api_?key|apikey|access_?key|private_?key|secret_?key|client_?secret|refresh_?token' +
        '|access_?token|auth_?token|session_?(id|token|key)|otp(_?secret)?|mfa_?secret|totp_?secret' +
        '|recovery_?codes?|salt|pin_?code|security_?answer|secret_?answer',
    ),
    what: 'a secret (password, token or key)',
    suggest: 'null',
    on: [...TEXTUAL, 'blob'],
    identifier: true,
  },
  {
    re: /(^|_)((address|addr)(_?line)?|street(_?(address|name|number))?|house_?(number|no))(_?\d+)?$/,
    what: 'a postal address',
    suggest: 'hash',
    on: TEXTUAL,
  },
  {
    re: word('postal_?code|post_?code|zip|zip_?code|zipcode|plz'),
    what: 'a postal code',
    suggest: 'hash',
    on: [...TEXTUAL, 'number'],
  },
  {
    re: word('lat|lng|lon|latitude|longitude|geo_?location|coordinates|gps'),
    what: 'a location',
    suggest: 'null',
    on: ['number', 'text', 'json', 'geo'],
  },
  {
    re: word('picture|pic|photo|photograph|avatar|portrait|headshot|selfie|mugshot|profile_?(pic|picture|photo|image)'),
    what: 'a photo of a person',
    suggest: 'null',
    on: ['blob', 'text', 'json'],
  },
  {
    re: word(
      'document|doc|scan|scanned|attachment|file|signature|resume|cv|image|img|thumbnail|fingerprint|biometrics?' +
        '|voice|recording|audio|video',
    ),
    what: 'a document or recording (a blob)',
    suggest: 'null',
    on: ['blob'],
  },
];

/** The last word of a name that makes it a reference to another row (`address_id`), not the value itself. */
const REFERENCE = /(^|_)(id|ids|uuid|guid|fk|ref|key|keys)$/;

/** Splits camelCase and separators into snake_case words: "billingEmailAddress" → "billing_email_address". */
export const snake = (name: string) =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_');

/**
 * The signs a column's name gives (the first rule that matches, so "email_address" is an email, not an address).
 * With the column's shape: only rules for its type's class apply, and a key (an integer or uuid column of a primary
 * or foreign key, or fed by a sequence) is never personal by its name; a name ending in id/key/ref is a reference
 * (`billing_address_id`) unless it names an identifier itself (`tax_id`, `api_key`, `session_id`).
 */
export function nameSign(table: string, column: string, shape?: ColumnShape): Sign | undefined {
  const n = snake(column);
  if (shape?.key && (shape.cls === 'number' || shape.cls === 'uuid')) return undefined;
  const reference = REFERENCE.test(n);
  for (const r of NAME_RULES) {
    if (reference && !r.identifier) continue;
    if (shape && !r.on.includes(shape.cls)) continue;
    if (r.re.test(n)) return { why: `its name says ${r.what}`, suggest: r.suggest };
  }
  if (n === 'name' && PERSON_TABLE.test(snake(table)) && (!shape || TEXTUAL.includes(shape.cls)))
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

/**
 * The paths of a json value whose leaves look personal (by key name, unless `byName` is false, or by value: a whole
 * value, or an email, JWT or key inside a string), each with the strategy to suggest. Arrays are walked with their
 * indexes as keys ("emails.0").
 */
export function jsonPaths(
  doc: unknown,
  prefix: string[] = [],
  out = new Map<string, string>(),
  byName = true,
): Map<string, string> {
  if (!doc || typeof doc !== 'object') return out;
  const entries = Array.isArray(doc) ? doc.map((v, i) => [String(i), v] as const) : Object.entries(doc);
  for (const [k, v] of entries) {
    const path = [...prefix, k];
    if (v && typeof v === 'object') jsonPaths(v, path, out, byName);
    else if (typeof v === 'string' || typeof v === 'number') {
      const named = byName && !Array.isArray(doc) ? nameSign('', k) : undefined;
      const kind = typeof v === 'string' ? (valueKind(v) ?? embeddedKind(v)) : undefined;
      const s = kind ? suggestionFor(kind) : named?.suggest;
      if (s && !out.has(path.join('.')))
        out.set(path.join('.'), s === 'date_shift:180' || s === 'partial' ? 'hash' : s);
    }
  }
  return out;
}

const PHONE_IN = /\+\d[\d\s().-]{6,}\d/g;
const IPV4_IN = /\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b/g;

/**
 * What kind of personal value appears in prose (a comment): what embeddedKind finds, and phone numbers written with
 * their country code (`+44 20 7946 0958`) or IP addresses outside the documentation ranges. Names in prose are not
 * found (masking.md says so).
 */
export function proseKind(text: string): string | undefined {
  const embedded = embeddedKind(text);
  if (embedded) return embedded;
  for (const m of text.matchAll(PHONE_IN)) {
    const n = m[0].replace(/\D/g, '').length;
    if (n >= 8 && n <= 15 && !m[0].startsWith('+1 555 ')) return 'phone numbers';
  }
  for (const m of text.matchAll(IPV4_IN)) if (ipv4Personal(m[0])) return 'IP addresses';
  return undefined;
}
