// A DVD rental store database modelled on the public pagila sample (PostgreSQL's port of MySQL's sakila): the same
// tables and column names and types (customer, staff with a password and a bytea picture, address with address2,
// postal_code and phone, actor, film, inventory, rental, payment partitioned by month), its views (customer_list,
// staff_list, film_list, sales_by_store, sales_by_film_category, actor_info), its materialized view
// rental_by_category, its functions (inventory_in_stock, film_in_stock, get_customer_balance) and its last_update
// triggers. The DDL and the data are our own, written from those facts: faker (seeded) for the people, set-based SQL
// for the bulk, so the same scale gives the same rows. Issue 41's masking tests use a small one; the bench grows it to
// ~300 MB (`rentalsPerCustomer` and `customers`).
import { Faker, en } from '@faker-js/faker';

export type Query = (text: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

export interface StoreScale {
  customers: number;
  /** Rentals (and payments) per customer: the bulk of the database. */
  rentalsPerCustomer: number;
  films: number;
}

export const SMALL_RENTAL_STORE: StoreScale = { customers: 599, rentalsPerCustomer: 27, films: 1000 };

const DDL = `
CREATE DOMAIN year AS integer CONSTRAINT year_check CHECK (VALUE >= 1901 AND VALUE <= 2155);
CREATE TYPE mpaa_rating AS ENUM ('G', 'PG', 'PG-13', 'R', 'NC-17');
CREATE FUNCTION last_updated() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.last_update = CURRENT_TIMESTAMP; RETURN NEW; END $$;
CREATE TABLE country (country_id serial PRIMARY KEY, country text NOT NULL, last_update timestamptz NOT NULL DEFAULT now());
CREATE TABLE city (city_id serial PRIMARY KEY, city text NOT NULL, country_id int NOT NULL REFERENCES country,
  last_update timestamptz NOT NULL DEFAULT now());
CREATE TABLE address (address_id serial PRIMARY KEY, address text NOT NULL, address2 text, district text NOT NULL,
  city_id int NOT NULL REFERENCES city, postal_code text, phone text NOT NULL, last_update timestamptz NOT NULL DEFAULT now());
CREATE TABLE language (language_id serial PRIMARY KEY, name character(20) NOT NULL, last_update timestamptz NOT NULL DEFAULT now());
CREATE TABLE actor (actor_id serial PRIMARY KEY, first_name text NOT NULL, last_name text NOT NULL,
  last_update timestamptz NOT NULL DEFAULT now());
CREATE INDEX idx_actor_last_name ON actor (last_name);
CREATE TABLE category (category_id serial PRIMARY KEY, name text NOT NULL, last_update timestamptz NOT NULL DEFAULT now());
CREATE TABLE film (film_id serial PRIMARY KEY, title text NOT NULL, description text, release_year year,
  language_id int NOT NULL REFERENCES language, original_language_id int REFERENCES language,
  rental_duration smallint NOT NULL DEFAULT 3, rental_rate numeric(4,2) NOT NULL DEFAULT 4.99, length smallint,
  replacement_cost numeric(5,2) NOT NULL DEFAULT 19.99, rating mpaa_rating DEFAULT 'G', last_update timestamptz NOT NULL DEFAULT now(),
  special_features text[], fulltext tsvector NOT NULL);
CREATE INDEX idx_title ON film (title);
CREATE TABLE film_actor (actor_id int NOT NULL REFERENCES actor, film_id int NOT NULL REFERENCES film,
  last_update timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (actor_id, film_id));
CREATE TABLE film_category (film_id int NOT NULL REFERENCES film, category_id int NOT NULL REFERENCES category,
  last_update timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (film_id, category_id));
CREATE TABLE staff (staff_id serial PRIMARY KEY, first_name text NOT NULL, last_name text NOT NULL,
  address_id int NOT NULL REFERENCES address, email text, store_id int NOT NULL, active boolean NOT NULL DEFAULT true,
  username text NOT NULL UNIQUE, password text, last_update timestamptz NOT NULL DEFAULT now(), picture bytea);
CREATE TABLE store (store_id serial PRIMARY KEY, manager_staff_id int NOT NULL UNIQUE REFERENCES staff,
  address_id int NOT NULL REFERENCES address, last_update timestamptz NOT NULL DEFAULT now());
CREATE TABLE customer (customer_id serial PRIMARY KEY, store_id int NOT NULL REFERENCES store, first_name text NOT NULL,
  last_name text NOT NULL, email text, address_id int NOT NULL REFERENCES address, activebool boolean NOT NULL DEFAULT true,
  create_date date NOT NULL DEFAULT current_date, last_update timestamptz DEFAULT now(), active int);
CREATE INDEX idx_last_name ON customer (last_name);
CREATE INDEX idx_fk_address_id ON customer (address_id);
CREATE TABLE inventory (inventory_id serial PRIMARY KEY, film_id int NOT NULL REFERENCES film,
  store_id int NOT NULL REFERENCES store, last_update timestamptz NOT NULL DEFAULT now());
CREATE TABLE rental (rental_id serial PRIMARY KEY, rental_date timestamptz NOT NULL, inventory_id int NOT NULL REFERENCES inventory,
  customer_id int NOT NULL REFERENCES customer, return_date timestamptz, staff_id int NOT NULL REFERENCES staff,
  last_update timestamptz NOT NULL DEFAULT now());
CREATE UNIQUE INDEX idx_unq_rental_rental_date_inventory_id_customer_id ON rental (rental_date, inventory_id, customer_id);
CREATE INDEX idx_fk_inventory_id ON rental (inventory_id);
CREATE TABLE payment (payment_id serial NOT NULL, customer_id int NOT NULL REFERENCES customer, staff_id int NOT NULL REFERENCES staff,
  rental_id int NOT NULL REFERENCES rental, amount numeric(5,2) NOT NULL, payment_date timestamptz NOT NULL,
  PRIMARY KEY (payment_date, payment_id)) PARTITION BY RANGE (payment_date);
${[1, 2, 3, 4, 5, 6, 7]
  .map(
    (m) =>
      `CREATE TABLE payment_p2022_0${m} PARTITION OF payment FOR VALUES FROM ('2022-0${m}-01 00:00:00+00') TO ('2022-0${m + 1}-01 00:00:00+00');`,
  )
  .join('\n')}
CREATE INDEX idx_fk_payment_customer_id ON payment (customer_id);
`;

const OBJECTS = `
ALTER TABLE staff ADD CONSTRAINT staff_store_id_fkey FOREIGN KEY (store_id) REFERENCES store;
CREATE TRIGGER last_updated BEFORE UPDATE ON actor FOR EACH ROW EXECUTE FUNCTION last_updated();
CREATE TRIGGER last_updated BEFORE UPDATE ON address FOR EACH ROW EXECUTE FUNCTION last_updated();
CREATE TRIGGER last_updated BEFORE UPDATE ON customer FOR EACH ROW EXECUTE FUNCTION last_updated();
CREATE TRIGGER last_updated BEFORE UPDATE ON staff FOR EACH ROW EXECUTE FUNCTION last_updated();
CREATE VIEW customer_list AS
  SELECT cu.customer_id AS id, cu.first_name || ' ' || cu.last_name AS name, a.address, a.postal_code AS "zip code",
         a.phone, city.city, country.country, CASE WHEN cu.activebool THEN 'active' ELSE '' END AS notes, cu.store_id AS sid
  FROM customer cu JOIN address a ON cu.address_id = a.address_id JOIN city ON a.city_id = city.city_id
  JOIN country ON city.country_id = country.country_id;
CREATE VIEW staff_list AS
  SELECT s.staff_id AS id, s.first_name || ' ' || s.last_name AS name, a.address, a.postal_code AS "zip code", a.phone,
         city.city, country.country, s.store_id AS sid
  FROM staff s JOIN address a ON s.address_id = a.address_id JOIN city ON a.city_id = city.city_id
  JOIN country ON city.country_id = country.country_id;
CREATE VIEW film_list AS
  SELECT film.film_id AS fid, film.title, film.description, category.name AS category, film.rental_rate AS price,
         film.length, film.rating, string_agg(actor.first_name || ' ' || actor.last_name, ', ' ORDER BY actor.actor_id) AS actors
  FROM category LEFT JOIN film_category ON category.category_id = film_category.category_id
  LEFT JOIN film ON film_category.film_id = film.film_id JOIN film_actor ON film.film_id = film_actor.film_id
  JOIN actor ON film_actor.actor_id = actor.actor_id
  GROUP BY film.film_id, film.title, film.description, category.name, film.rental_rate, film.length, film.rating;
CREATE VIEW sales_by_film_category AS
  SELECT c.name AS category, sum(p.amount) AS total_sales
  FROM payment p JOIN rental r ON p.rental_id = r.rental_id JOIN inventory i ON r.inventory_id = i.inventory_id
  JOIN film f ON i.film_id = f.film_id JOIN film_category fc ON f.film_id = fc.film_id JOIN category c ON fc.category_id = c.category_id
  GROUP BY c.name ORDER BY sum(p.amount) DESC;
CREATE VIEW sales_by_store AS
  SELECT c.city || ',' || cy.country AS store, m.first_name || ' ' || m.last_name AS manager, sum(p.amount) AS total_sales
  FROM payment p JOIN rental r ON p.rental_id = r.rental_id JOIN inventory i ON r.inventory_id = i.inventory_id
  JOIN store s ON i.store_id = s.store_id JOIN address a ON s.address_id = a.address_id JOIN city c ON a.city_id = c.city_id
  JOIN country cy ON c.country_id = cy.country_id JOIN staff m ON s.manager_staff_id = m.staff_id
  GROUP BY cy.country, c.city, s.store_id, m.first_name, m.last_name ORDER BY cy.country, c.city;
CREATE VIEW actor_info AS
  SELECT a.actor_id, a.first_name, a.last_name,
         string_agg(DISTINCT c.name || ': ' || f.title, '; ' ORDER BY c.name || ': ' || f.title) AS film_info
  FROM actor a LEFT JOIN film_actor fa ON a.actor_id = fa.actor_id LEFT JOIN film f ON fa.film_id = f.film_id
  LEFT JOIN film_category fc ON f.film_id = fc.film_id LEFT JOIN category c ON fc.category_id = c.category_id
  GROUP BY a.actor_id, a.first_name, a.last_name;
CREATE MATERIALIZED VIEW rental_by_category AS
  SELECT c.name AS category, sum(p.amount) AS total_sales
  FROM payment p JOIN rental r ON p.rental_id = r.rental_id JOIN inventory i ON r.inventory_id = i.inventory_id
  JOIN film f ON i.film_id = f.film_id JOIN film_category fc ON f.film_id = fc.film_id JOIN category c ON fc.category_id = c.category_id
  GROUP BY c.name ORDER BY sum(p.amount) DESC;
CREATE UNIQUE INDEX rental_category ON rental_by_category (category);
CREATE FUNCTION inventory_in_stock(p_inventory_id int) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE v_rentals int; v_out int;
BEGIN
  SELECT count(*) INTO v_rentals FROM rental WHERE inventory_id = p_inventory_id;
  IF v_rentals = 0 THEN RETURN true; END IF;
  SELECT count(rental_id) INTO v_out FROM inventory LEFT JOIN rental USING (inventory_id)
  WHERE inventory.inventory_id = p_inventory_id AND rental.return_date IS NULL;
  RETURN v_out = 0;
END $$;
CREATE FUNCTION film_in_stock(p_film_id int, p_store_id int, OUT p_film_count int) RETURNS SETOF int LANGUAGE sql AS $$
  SELECT inventory_id FROM inventory WHERE film_id = $1 AND store_id = $2 AND inventory_in_stock(inventory_id) $$;
CREATE FUNCTION get_customer_balance(p_customer_id int, p_effective_date timestamptz) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE v_rentfees numeric; v_overfees int; v_payments numeric;
BEGIN
  SELECT coalesce(sum(film.rental_rate), 0) INTO v_rentfees FROM film, inventory, rental
  WHERE film.film_id = inventory.film_id AND inventory.inventory_id = rental.inventory_id
    AND rental.rental_date <= p_effective_date AND rental.customer_id = p_customer_id;
  SELECT coalesce(sum(CASE WHEN rental.return_date - rental.rental_date > film.rental_duration * interval '1 day'
    THEN extract(day FROM rental.return_date - rental.rental_date - film.rental_duration * interval '1 day')::int ELSE 0 END), 0)
    INTO v_overfees FROM rental, inventory, film
  WHERE film.film_id = inventory.film_id AND inventory.inventory_id = rental.inventory_id
    AND rental.rental_date <= p_effective_date AND rental.customer_id = p_customer_id;
  SELECT coalesce(sum(payment.amount), 0) INTO v_payments FROM payment
  WHERE payment.payment_date <= p_effective_date AND payment.customer_id = p_customer_id;
  RETURN v_rentfees + v_overfees - v_payments;
END $$;
`;

/** Every personal column of the rental store: what the scan must flag, and nothing else. */
export const RENTAL_STORE_PERSONAL = [
  'public.actor.first_name',
  'public.actor.last_name',
  'public.address.address',
  'public.address.address2',
  'public.address.phone',
  'public.address.postal_code',
  'public.customer.email',
  'public.customer.first_name',
  'public.customer.last_name',
  'public.staff.email',
  'public.staff.first_name',
  'public.staff.last_name',
  'public.staff.password',
  'public.staff.picture',
  'public.staff.username',
];

/**
 * What the rental store's own views and functions return, restricted to what no rule masks (a view's columns that
 * show a name, an address, a postal code or a phone are left out, by name): the same on the origin and on the masked
 * copy, since masking rewrites only those columns and keeps every key, date and amount.
 */
export const RENTAL_STORE_RESULTS = [
  'SELECT id, city, country, notes, sid FROM customer_list ORDER BY id', // name, address, zip code, phone: masked
  'SELECT id, city, country, sid FROM staff_list ORDER BY id', // name, address, zip code, phone: masked
  'SELECT fid, title, description, category, price, length, rating FROM film_list ORDER BY fid, category', // actors: masked
  'SELECT category, total_sales FROM sales_by_film_category ORDER BY category',
  'SELECT store, total_sales FROM sales_by_store ORDER BY store', // manager: masked
  'SELECT actor_id, film_info FROM actor_info ORDER BY actor_id', // first_name, last_name: masked
  'SELECT category, total_sales FROM rental_by_category ORDER BY category',
  `SELECT customer_id, get_customer_balance(customer_id, '2022-06-15') AS balance FROM customer ORDER BY customer_id`,
  'SELECT count(*) FILTER (WHERE inventory_in_stock(inventory_id)) AS in_stock FROM inventory',
  'SELECT f.film_id, s.store_id, (SELECT count(*) FROM film_in_stock(f.film_id, s.store_id)) AS n FROM film f, store s WHERE f.film_id % 50 = 0 ORDER BY 1, 2',
];

/** Inserts rows (values in `columns` order) through jsonb_populate_recordset: each value read by its column's type. */
export async function insertRows(query: Query, table: string, columns: string[], rows: unknown[][]): Promise<void> {
  const list = columns.map((c) => `"${c}"`).join(', ');
  for (let at = 0; at < rows.length; at += 2000) {
    const docs = rows.slice(at, at + 2000).map((r) => Object.fromEntries(columns.map((c, i) => [c, r[i] ?? null])));
    await query(
      `INSERT INTO ${table} (${list}) SELECT ${list} FROM jsonb_populate_recordset(NULL::${table}, $1::jsonb)`,
      [JSON.stringify(docs)],
    );
  }
}

/** Fills an empty database with the rental store at `scale` (seeded: the same scale, the same rows). */
export async function fillRentalStore(query: Query, scale: StoreScale = SMALL_RENTAL_STORE, seed = 41): Promise<void> {
  const f = new Faker({ locale: [en] });
  f.seed(seed);
  await query(DDL);
  const countries = [...new Set(Array.from({ length: 140 }, () => f.location.country()))].slice(0, 109);
  await insertRows(
    query,
    'country',
    ['country'],
    countries.map((c) => [c]),
  );
  const cities = Array.from({ length: 600 }, (_, i) => [f.location.city(), 1 + (i % countries.length)]);
  await insertRows(query, 'city', ['city', 'country_id'], cities);
  const stores = 2;
  const people = scale.customers + stores; // an address each: the staff's, then the customers'
  const addresses = Array.from({ length: people }, (_, i) => [
    f.location.streetAddress(),
    i % 7 === 0 ? f.location.secondaryAddress() : null,
    f.location.state(),
    1 + (i % cities.length),
    f.location.zipCode('#####'),
    f.phone.number({ style: i % 3 ? 'national' : 'international' }),
  ]);
  await insertRows(query, 'address', ['address', 'address2', 'district', 'city_id', 'postal_code', 'phone'], addresses);
  await query(
    `INSERT INTO language (name) VALUES ('English'), ('Italian'), ('Japanese'), ('Mandarin'), ('French'), ('German')`,
  );
  const actors = Array.from({ length: 200 }, () => [
    f.person.firstName().toUpperCase(),
    f.person.lastName().toUpperCase(),
  ]);
  await insertRows(query, 'actor', ['first_name', 'last_name'], actors);
  const categories = ['Action', 'Animation', 'Children', 'Classics', 'Comedy', 'Documentary', 'Drama', 'Family'];
  await insertRows(
    query,
    'category',
    ['name'],
    [...categories, 'Foreign', 'Games', 'Horror', 'Music', 'New', 'Sci-Fi', 'Sports', 'Travel'].map((c) => [c]),
  );
  const films = Array.from({ length: scale.films }, (_, i) => [
    `${f.word.adjective()} ${f.word.noun()} ${i}`.toUpperCase(),
    `A ${f.word.adjective()} ${f.word.noun()} of a ${f.word.noun()} who must ${f.word.verb()} a ${f.word.noun()}`,
    2006,
    1 + (i % 6),
    3 + (i % 5),
    ['0.99', '2.99', '4.99'][i % 3],
    46 + (i % 140),
    (9.99 + (i % 21)).toFixed(2),
    ['G', 'PG', 'PG-13', 'R', 'NC-17'][i % 5],
    ['Trailers', 'Commentaries', 'Deleted Scenes', 'Behind the Scenes'].filter((_, k) => (i >> k) & 1),
  ]);
  await insertRows(
    query,
    'film',
    [
      'title',
      'description',
      'release_year',
      'language_id',
      'rental_duration',
      'rental_rate',
      'length',
      'replacement_cost',
      'rating',
      'special_features',
      'fulltext',
    ],
    films.map((r) => [...r, '']),
  );
  await query(`UPDATE film SET fulltext = to_tsvector('english', title || ' ' || coalesce(description, ''))`);
  await query(
    `INSERT INTO film_actor (actor_id, film_id) SELECT DISTINCT 1 + (film_id * 7 + k * 31) % 200, film_id FROM film, generate_series(1, 5) k`,
  );
  await query(`INSERT INTO film_category (film_id, category_id) SELECT film_id, 1 + film_id % 16 FROM film`);
  // Two stores, each managed by one of two staff (the staff's store FK is added once both exist).
  const staff = Array.from({ length: stores }, (_, i) => {
    const first = f.person.firstName();
    const last = f.person.lastName();
    const picture = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.from(f.string.alphanumeric(2048))]);
    return [
      first,
      last,
      1 + i,
      `${first}.${last}@${f.internet.domainName()}`.toLowerCase(),
      1 + i,
      f.internet.username({ firstName: first, lastName: last }),
      f.string.hexadecimal({ length: 40, casing: 'lower', prefix: '' }),
      `\\x${picture.toString('hex')}`,
    ];
  });
  await insertRows(
    query,
    'staff',
    ['first_name', 'last_name', 'address_id', 'email', 'store_id', 'username', 'password', 'picture'],
    staff,
  );
  await query(
    `INSERT INTO store (manager_staff_id, address_id) SELECT staff_id, address_id FROM staff ORDER BY staff_id`,
  );
  const customers = Array.from({ length: scale.customers }, (_, i) => {
    const first = f.person.firstName();
    const last = f.person.lastName();
    return [
      1 + (i % stores),
      first.toUpperCase(),
      last.toUpperCase(),
      `${first}.${last}${i}@${f.internet.domainName()}`.toLowerCase(),
      stores + 1 + i,
      `2022-0${1 + (i % 2)}-${10 + (i % 18)}`,
      i % 50 ? 1 : 0,
    ];
  });
  await insertRows(
    query,
    'customer',
    ['store_id', 'first_name', 'last_name', 'email', 'address_id', 'create_date', 'active'],
    customers,
  );
  await query(
    `INSERT INTO inventory (film_id, store_id) SELECT film_id, s FROM film, generate_series(1, ${stores}) s, generate_series(1, 1 + film_id % 4) k`,
  );
  // The bulk, set-based and deterministic: rentals spread over 2022-01-01 … 2022-07-28, a payment for each.
  await query(
    `INSERT INTO rental (rental_date, inventory_id, customer_id, return_date, staff_id)
     SELECT d, 1 + (c::bigint * 7919 + j * 104729) % (SELECT count(*) FROM inventory), c,
            CASE WHEN (c + j) % 97 = 0 THEN NULL ELSE d + (1 + (c + j) % 9) * interval '1 day' END, 1 + (c + j) % ${stores}
     FROM generate_series(1, ${scale.customers}) c, generate_series(1, ${scale.rentalsPerCustomer}) j,
          LATERAL (SELECT timestamptz '2022-01-01 00:00:00+00' + ((c::bigint * 7907 + j::bigint * 977) % (208 * 86400)) * interval '1 second' AS d) x`,
  );
  await query(
    `INSERT INTO payment (customer_id, staff_id, rental_id, amount, payment_date)
     SELECT r.customer_id, r.staff_id, r.rental_id, f.rental_rate + (r.rental_id % 3), r.rental_date + interval '2 hours'
     FROM rental r JOIN inventory i USING (inventory_id) JOIN film f USING (film_id)`,
  );
  await query(OBJECTS);
  await query('ANALYZE');
}

/** The personal values of the rental store's origin, by what they are (what must not be left in a masked copy). */
export async function rentalStoreOriginals(query: Query): Promise<Record<string, string[]>> {
  const col = async (q: string) => (await query(q)).map((r) => String(Object.values(r)[0]));
  return {
    emails: await col(`SELECT email FROM customer UNION SELECT email FROM staff`),
    names: await col(
      `SELECT first_name FROM customer UNION SELECT last_name FROM customer UNION SELECT first_name FROM staff
       UNION SELECT last_name FROM staff UNION SELECT first_name FROM actor UNION SELECT last_name FROM actor`,
    ),
    full_names: await col(
      `SELECT first_name || ' ' || last_name FROM customer UNION SELECT first_name || ' ' || last_name FROM staff
       UNION SELECT first_name || ' ' || last_name FROM actor`,
    ),
    streets: await col(`SELECT address FROM address UNION SELECT address2 FROM address WHERE address2 IS NOT NULL`),
    postcodes: await col(`SELECT postal_code FROM address`),
    phones: await col(`SELECT phone FROM address`),
    usernames: await col(`SELECT username FROM staff`),
  };
}

/** The scale that makes a database of about `mb` MB (measured: ~10.9 MB fixed, ~6.86 KB a customer and what is theirs). */
export function rentalStoreScaleFor(mb: number): StoreScale {
  return {
    ...SMALL_RENTAL_STORE,
    customers: Math.max(SMALL_RENTAL_STORE.customers, Math.round(((mb - 10.9) * 1024) / 6.86)),
  };
}
