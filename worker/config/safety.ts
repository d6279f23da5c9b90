/**
 * The limits that keep production settings safe: the shortest secrets and tokens and how
 * varied they must be, the largest body limits, and the subscriber ports production never
 * opens. The settings table (table.ts) and its rules use them; every value is also
 * exported for the tests, through worker/config.ts.
 */
import { STANDARD_PORTS } from './values.ts';

/**
 * The shortest gateway or admin token accepted outside local mode, in characters: the
 * operator makes these up, so they can always be long.
 */
export const MIN_TOKEN_LENGTH = 32;

/**
 * The shortest merchant or webhook secret accepted outside local mode, in characters:
 * shorter than the tokens because the payment service issues them and the operator cannot
 * choose their length, long enough that a one-word or placeholder secret is refused.
 */
export const MIN_PROVIDER_SECRET_LENGTH = 16;

/**
 * The largest `MAX_BODY_BYTES` outside local mode, in bytes: a payments request is a few
 * kilobytes of JSON, and every body is held in memory (an isolate has 128 MB for all its
 * requests) to be validated and signed, so a few large bodies could reset the isolate.
 */
export const MAX_PRODUCTION_BODY_BYTES = 1024 * 1024;

/**
 * The largest webhook body in every mode, in bytes: the ingress is open and reads the
 * body before checking its signature, so its limit stays small whatever the mode.
 */
export const MAX_WEBHOOK_BODY_BYTES = 1024 * 1024;

/**
 * Ports of well-known services that `SUBSCRIBER_PORTS` may not open outside local mode,
 * besides every port below 1024: databases, caches, queues, cluster and container APIs,
 * remote desktops. A delivery is a POST with a body the gateway chooses, so a subscriber
 * URL on one of them would let an admin token holder reach such a service on any public
 * host and read the start of its answer.
 */
export const SERVICE_PORTS: readonly number[] = [
  1080, // SOCKS proxy
  1433, // Microsoft SQL Server
  1521, // Oracle
  1883, // MQTT
  2049, // NFS
  2375, // Docker API
  2376, // Docker API over TLS
  2379, // etcd
  2380, // etcd peers
  3306, // MySQL
  3389, // remote desktop
  4369, // Erlang port mapper
  5432, // PostgreSQL
  5672, // AMQP
  5900, // VNC
  5984, // CouchDB
  6379, // Redis
  6443, // Kubernetes API
  7001, // WebLogic
  8086, // InfluxDB
  9042, // Cassandra
  9092, // Kafka
  9200, // Elasticsearch
  9300, // Elasticsearch nodes
  10250, // kubelet
  11211, // memcached
  15672, // RabbitMQ management
  27017, // MongoDB
];

/** Ports below this are system ports (RFC 6335), refused outside local mode but 80 and 443. */
const FIRST_USER_PORT = 1024;

/**
 * Whether `port` may be added to the subscriber ports outside local mode: 80, 443, or a
 * user port that is not one of {@link SERVICE_PORTS}.
 *
 * @param port - a port number, 1 to 65535.
 */
export function isOpenablePort(port: number): boolean {
  if (STANDARD_PORTS.includes(port)) return true;
  return port >= FIRST_USER_PORT && !SERVICE_PORTS.includes(port);
}

/**
 * The fewest different characters a secret or token may have outside local mode. Not an
 * entropy estimate: a guard against placeholders (one character repeated, `abab...`, a
 * short word typed over and over) that length alone lets through. Random text of 16
 * characters or more from any alphabet of 16 symbols or more has fewer than 6 different
 * ones about once in 30,000 (16 hex digits) or far more rarely (longer, or a larger alphabet).
 *
 * @internal Exported for the tests, which check against the same value.
 */
export const MIN_DISTINCT_CHARACTERS = 6;

/**
 * Whether `secret` has at least {@link MIN_DISTINCT_CHARACTERS} different characters
 * (code points).
 *
 * @param secret - a secret or token.
 */
export function isVaried(secret: string): boolean {
  return new Set(secret).size >= MIN_DISTINCT_CHARACTERS;
}

/** The end of the low-entropy rules' messages. */
export const DIFFERENT_CHARACTERS = `at least ${MIN_DISTINCT_CHARACTERS} different characters outside local mode (refused as low-entropy)`;

/**
 * The production rules of a secret or token: at least `minLength` characters and
 * {@link MIN_DISTINCT_CHARACTERS} different ones (`undefined`, unset, is left to other rules).
 *
 * @param minLength - the shortest length accepted, in characters.
 * @returns the two rules, length first.
 */
export function strongSecret(
  minLength: number,
): { holds(value: string | undefined): boolean; readonly problem: string }[] {
  return [
    {
      holds: (secret) => secret === undefined || secret.length >= minLength,
      problem: `must be at least ${minLength} characters outside local mode`,
    },
    {
      holds: (secret) => secret === undefined || isVaried(secret),
      problem: `must have ${DIFFERENT_CHARACTERS}`,
    },
  ];
}
