// A digital music store database modelled on the public Chinook sample (its PostgreSQL script): the same tables and
// quoted PascalCase columns ("Customer" and "Employee" with "Email", "Phone", "Fax", "Address", "PostalCode",
// "BirthDate"; "Invoice" with the billing address; "InvoiceLine", "Track", "Album", "Artist", "Genre", "MediaType",
// "Playlist"), varchar lengths as there (a "LastName" of 20 characters). Chinook ships no views or functions; the
// three views and the function here are the reports its tutorials write over it. One addition: a unique index on
// "Customer"("Email"), so that a masked unique column is tested on it. The DDL and the data are our own: faker
// (seeded) for the people, set-based SQL for the invoices, so the same scale gives the same rows.
import { Faker, en } from '@faker-js/faker';
import { insertRows, type Query } from './rental-store.js';

export interface MusicScale {
  customers: number;
  /** Invoices per customer (each with a few lines): the bulk of the database. */
  invoicesPerCustomer: number;
  tracks: number;
}

export const SMALL_MUSIC_STORE: MusicScale = { customers: 500, invoicesPerCustomer: 7, tracks: 3503 };

const DDL = `
CREATE TABLE "Artist" ("ArtistId" int NOT NULL PRIMARY KEY, "Name" varchar(120));
CREATE TABLE "Album" ("AlbumId" int NOT NULL PRIMARY KEY, "Title" varchar(160) NOT NULL, "ArtistId" int NOT NULL REFERENCES "Artist");
CREATE INDEX "IFK_AlbumArtistId" ON "Album" ("ArtistId");
CREATE TABLE "Genre" ("GenreId" int NOT NULL PRIMARY KEY, "Name" varchar(120));
CREATE TABLE "MediaType" ("MediaTypeId" int NOT NULL PRIMARY KEY, "Name" varchar(120));
CREATE TABLE "Track" ("TrackId" int NOT NULL PRIMARY KEY, "Name" varchar(200) NOT NULL, "AlbumId" int REFERENCES "Album",
  "MediaTypeId" int NOT NULL REFERENCES "MediaType", "GenreId" int REFERENCES "Genre", "Composer" varchar(220),
  "Milliseconds" int NOT NULL, "Bytes" int, "UnitPrice" numeric(10,2) NOT NULL);
CREATE INDEX "IFK_TrackAlbumId" ON "Track" ("AlbumId");
CREATE TABLE "Employee" ("EmployeeId" int NOT NULL PRIMARY KEY, "LastName" varchar(20) NOT NULL, "FirstName" varchar(20) NOT NULL,
  "Title" varchar(30), "ReportsTo" int REFERENCES "Employee", "BirthDate" timestamp, "HireDate" timestamp, "Address" varchar(70),
  "City" varchar(40), "State" varchar(40), "Country" varchar(40), "PostalCode" varchar(10), "Phone" varchar(24), "Fax" varchar(24),
  "Email" varchar(60));
CREATE TABLE "Customer" ("CustomerId" int NOT NULL PRIMARY KEY, "FirstName" varchar(40) NOT NULL, "LastName" varchar(20) NOT NULL,
  "Company" varchar(80), "Address" varchar(70), "City" varchar(40), "State" varchar(40), "Country" varchar(40),
  "PostalCode" varchar(10), "Phone" varchar(24), "Fax" varchar(24), "Email" varchar(60) NOT NULL, "SupportRepId" int REFERENCES "Employee");
CREATE INDEX "IFK_CustomerSupportRepId" ON "Customer" ("SupportRepId");
CREATE UNIQUE INDEX "UK_CustomerEmail" ON "Customer" ("Email");
CREATE TABLE "Invoice" ("InvoiceId" int NOT NULL PRIMARY KEY, "CustomerId" int NOT NULL REFERENCES "Customer",
  "InvoiceDate" timestamp NOT NULL, "BillingAddress" varchar(70), "BillingCity" varchar(40), "BillingState" varchar(40),
  "BillingCountry" varchar(40), "BillingPostalCode" varchar(10), "Total" numeric(10,2) NOT NULL);
CREATE INDEX "IFK_InvoiceCustomerId" ON "Invoice" ("CustomerId");
CREATE TABLE "InvoiceLine" ("InvoiceLineId" int NOT NULL PRIMARY KEY, "InvoiceId" int NOT NULL REFERENCES "Invoice",
  "TrackId" int NOT NULL REFERENCES "Track", "UnitPrice" numeric(10,2) NOT NULL, "Quantity" int NOT NULL);
CREATE INDEX "IFK_InvoiceLineInvoiceId" ON "InvoiceLine" ("InvoiceId");
CREATE INDEX "IFK_InvoiceLineTrackId" ON "InvoiceLine" ("TrackId");
CREATE TABLE "Playlist" ("PlaylistId" int NOT NULL PRIMARY KEY, "Name" varchar(120));
CREATE TABLE "PlaylistTrack" ("PlaylistId" int NOT NULL REFERENCES "Playlist", "TrackId" int NOT NULL REFERENCES "Track",
  PRIMARY KEY ("PlaylistId", "TrackId"));
`;

const OBJECTS = `
CREATE VIEW invoice_totals_by_country AS
  SELECT "BillingCountry" AS country, count(*) AS invoices, sum("Total") AS total FROM "Invoice" GROUP BY "BillingCountry";
CREATE VIEW sales_by_support_rep AS
  SELECT e."EmployeeId", e."FirstName" || ' ' || e."LastName" AS rep, count(DISTINCT c."CustomerId") AS customers, sum(i."Total") AS total
  FROM "Employee" e JOIN "Customer" c ON c."SupportRepId" = e."EmployeeId" JOIN "Invoice" i ON i."CustomerId" = c."CustomerId"
  GROUP BY e."EmployeeId", e."FirstName", e."LastName";
CREATE VIEW top_tracks AS
  SELECT t."TrackId", t."Name", g."Name" AS genre, sum(l."Quantity") AS sold
  FROM "InvoiceLine" l JOIN "Track" t USING ("TrackId") LEFT JOIN "Genre" g USING ("GenreId") GROUP BY t."TrackId", t."Name", g."Name";
CREATE FUNCTION customer_lifetime_value(p_customer int) RETURNS numeric LANGUAGE sql STABLE AS $$
  SELECT coalesce(sum("Total"), 0) FROM "Invoice" WHERE "CustomerId" = p_customer $$;
`;

/** Every personal column of the music store: what the scan must flag, and nothing else. */
export const MUSIC_STORE_PERSONAL = [
  'public.Customer.Address',
  'public.Customer.Email',
  'public.Customer.Fax',
  'public.Customer.FirstName',
  'public.Customer.LastName',
  'public.Customer.Phone',
  'public.Customer.PostalCode',
  'public.Employee.Address',
  'public.Employee.BirthDate',
  'public.Employee.Email',
  'public.Employee.Fax',
  'public.Employee.FirstName',
  'public.Employee.LastName',
  'public.Employee.Phone',
  'public.Employee.PostalCode',
  'public.Invoice.BillingAddress',
  'public.Invoice.BillingPostalCode',
];

/** The music store's views and function, restricted to what no rule masks (the support rep's name is left out). */
export const MUSIC_STORE_RESULTS = [
  'SELECT country, invoices, total FROM invoice_totals_by_country ORDER BY country',
  'SELECT "EmployeeId", customers, total FROM sales_by_support_rep ORDER BY 1', // rep: masked
  'SELECT "TrackId", "Name", genre, sold FROM top_tracks ORDER BY 1',
  'SELECT "CustomerId", customer_lifetime_value("CustomerId") AS v FROM "Customer" ORDER BY 1',
];

/** Fills an empty database with the music store at `scale` (seeded: the same scale, the same rows). */
export async function fillMusicStore(query: Query, scale: MusicScale = SMALL_MUSIC_STORE, seed = 42): Promise<void> {
  const f = new Faker({ locale: [en] });
  f.seed(seed);
  await query(DDL);
  const artists = 275;
  const albums = 347;
  await insertRows(
    query,
    '"Artist"',
    ['ArtistId', 'Name'],
    range(artists).map((i) => [i, f.music.artist()]),
  );
  await insertRows(
    query,
    '"Album"',
    ['AlbumId', 'Title', 'ArtistId'],
    range(albums).map((i) => [i, f.music.album(), 1 + (i % artists)]),
  );
  const genres = [
    'Rock',
    'Jazz',
    'Metal',
    'Alternative & Punk',
    'Rock And Roll',
    'Blues',
    'Latin',
    'Reggae',
    'Pop',
    'Soundtrack',
  ];
  await insertRows(
    query,
    '"Genre"',
    ['GenreId', 'Name'],
    genres.map((g, i) => [i + 1, g]),
  );
  const media = [
    'MPEG audio file',
    'Protected AAC audio file',
    'Protected MPEG-4 video file',
    'Purchased AAC audio file',
    'AAC audio file',
  ];
  await insertRows(
    query,
    '"MediaType"',
    ['MediaTypeId', 'Name'],
    media.map((m, i) => [i + 1, m]),
  );
  const tracks = range(scale.tracks).map((i) => [
    i,
    `${f.music.songName()} (take ${i})`,
    1 + (i % albums),
    1 + (i % media.length),
    1 + (i % genres.length),
    i % 4 ? `${f.music.artist()}` : null,
    180000 + ((i * 7919) % 240000),
    3000000 + ((i * 104729) % 9000000),
    i % 10 ? '0.99' : '1.99',
  ]);
  await insertRows(
    query,
    '"Track"',
    ['TrackId', 'Name', 'AlbumId', 'MediaTypeId', 'GenreId', 'Composer', 'Milliseconds', 'Bytes', 'UnitPrice'],
    tracks,
  );
  const phone = () => f.phone.number({ style: 'international' }).slice(0, 24);
  const person = () => ({ first: f.person.firstName().slice(0, 20), last: f.person.lastName().slice(0, 20) });
  const employees = range(8).map((i) => {
    const p = person();
    return [
      i,
      p.last,
      p.first,
      ['General Manager', 'Sales Manager', 'Sales Support Agent', 'IT Staff'][Math.min(i - 1, 3)],
      i === 1 ? null : i <= 3 ? 1 : 2,
      f.date.birthdate({ min: 1950, max: 1985, mode: 'year' }).toISOString().slice(0, 19),
      `200${i % 4}-0${1 + (i % 9)}-14 00:00:00`,
      f.location.streetAddress().slice(0, 70),
      f.location.city(),
      f.location.state({ abbreviated: true }),
      'Canada',
      f.location.zipCode('?#? #?#').toUpperCase(),
      phone(),
      phone(),
      `${p.first}.${p.last}@chinookcorp.com`.toLowerCase(),
    ];
  });
  await insertRows(
    query,
    '"Employee"',
    [
      'EmployeeId',
      'LastName',
      'FirstName',
      'Title',
      'ReportsTo',
      'BirthDate',
      'HireDate',
      'Address',
      'City',
      'State',
      'Country',
      'PostalCode',
      'Phone',
      'Fax',
      'Email',
    ],
    employees,
  );
  const customers = range(scale.customers).map((i) => {
    const p = person();
    return [
      i,
      p.first,
      p.last,
      i % 4 ? null : f.company.name().slice(0, 80),
      f.location.streetAddress().slice(0, 70),
      f.location.city().slice(0, 40),
      f.location.state({ abbreviated: true }),
      f.location.country().slice(0, 40),
      f.location.zipCode().slice(0, 10),
      phone(),
      i % 5 ? null : phone(),
      `${p.first}.${p.last}.${i}@${f.internet.domainName()}`.toLowerCase().slice(0, 60),
      3 + (i % 3),
    ];
  });
  await insertRows(
    query,
    '"Customer"',
    [
      'CustomerId',
      'FirstName',
      'LastName',
      'Company',
      'Address',
      'City',
      'State',
      'Country',
      'PostalCode',
      'Phone',
      'Fax',
      'Email',
      'SupportRepId',
    ],
    customers,
  );
  // The bulk: invoices billed to each customer's address, with 1 to 9 lines each (set-based, deterministic).
  await query(
    `INSERT INTO "Invoice" ("InvoiceId", "CustomerId", "InvoiceDate", "BillingAddress", "BillingCity", "BillingState", "BillingCountry", "BillingPostalCode", "Total")
     SELECT (c."CustomerId" - 1) * ${scale.invoicesPerCustomer} + k, c."CustomerId",
            timestamp '2021-01-01' + ((c."CustomerId"::bigint * 7907 + k * 977) % 1460) * interval '1 day',
            c."Address", c."City", c."State", c."Country", c."PostalCode", 0
     FROM "Customer" c, generate_series(1, ${scale.invoicesPerCustomer}) k`,
  );
  await query(
    `INSERT INTO "InvoiceLine" ("InvoiceLineId", "InvoiceId", "TrackId", "UnitPrice", "Quantity")
     SELECT row_number() OVER (ORDER BY i."InvoiceId", n), i."InvoiceId", 1 + (i."InvoiceId"::bigint * 7919 + n * 104729) % ${scale.tracks},
            CASE WHEN (i."InvoiceId" + n) % 10 = 0 THEN 1.99 ELSE 0.99 END, 1
     FROM "Invoice" i, generate_series(1, 1 + i."InvoiceId" % 9) n`,
  );
  await query(
    `UPDATE "Invoice" i SET "Total" = s.t FROM (SELECT "InvoiceId", sum("UnitPrice" * "Quantity") AS t FROM "InvoiceLine" GROUP BY 1) s
     WHERE s."InvoiceId" = i."InvoiceId"`,
  );
  await insertRows(
    query,
    '"Playlist"',
    ['PlaylistId', 'Name'],
    ['Music', 'Movies', 'TV Shows', 'Audiobooks', '90’s Music', 'Grunge'].map((n, i) => [i + 1, n]),
  );
  await query(
    `INSERT INTO "PlaylistTrack" SELECT p, "TrackId" FROM "Track", generate_series(1, 6) p WHERE ("TrackId" + p) % (p + 1) = 0`,
  );
  await query(OBJECTS);
  await query('ANALYZE');
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/** The personal values of the music store's origin, by what they are (what must not be left in a masked copy). */
export async function musicStoreOriginals(query: Query): Promise<Record<string, string[]>> {
  const col = async (q: string) => (await query(q)).map((r) => String(Object.values(r)[0]));
  const both = (c: string) =>
    `SELECT "${c}" FROM "Customer" WHERE "${c}" IS NOT NULL UNION SELECT "${c}" FROM "Employee" WHERE "${c}" IS NOT NULL`;
  return {
    emails: await col(both('Email')),
    names: await col(`${both('FirstName')} UNION ${both('LastName')}`),
    full_names: await col(
      `SELECT "FirstName" || ' ' || "LastName" FROM "Customer" UNION SELECT "FirstName" || ' ' || "LastName" FROM "Employee"`,
    ),
    streets: await col(both('Address')),
    postcodes: await col(both('PostalCode')),
    phones: await col(`${both('Phone')} UNION ${both('Fax')}`),
    usernames: [],
  };
}

/** The scale that makes a database of about `mb` MB (measured: ~9.3 MB fixed, ~5.33 KB a customer and what is theirs). */
export function musicStoreScaleFor(mb: number): MusicScale {
  return {
    ...SMALL_MUSIC_STORE,
    customers: Math.max(SMALL_MUSIC_STORE.customers, Math.round(((mb - 9.3) * 1024) / 5.33)),
  };
}
