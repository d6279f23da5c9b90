// Deterministic stand-ins: account holder names and virtual account numbers.

/**
 * 32-bit FNV-1a hash of a string, for deterministic sandbox values (not security).
 *
 * @param text - input.
 * @returns an unsigned 32-bit integer.
 */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

const FIRST_NAMES = [
  'Adaeze',
  'Babatunde',
  'Chinedu',
  'Damilola',
  'Emeka',
  'Funmilayo',
  'Ibrahim',
  'Ngozi',
  'Oluwaseun',
  'Tobi',
  'Yetunde',
  'Zainab',
];
const LAST_NAMES = [
  'Adeyemi',
  'Bello',
  'Eze',
  'Nwosu',
  'Okafor',
  'Okonkwo',
  'Olawale',
  'Balogun',
  'Abubakar',
  'Obi',
];

/**
 * The account holder name the sandbox resolves an account to: the same for the same
 * bank code and account number, every time.
 *
 * @param bankCode - bank code.
 * @param accountNumber - account number.
 */
export function accountHolderName(bankCode: string, accountNumber: string): string {
  const hash = fnv1a(`${bankCode}:${accountNumber}`);
  const first = FIRST_NAMES[hash % FIRST_NAMES.length] ?? 'Ada';
  const last = LAST_NAMES[Math.floor(hash / FIRST_NAMES.length) % LAST_NAMES.length] ?? 'Obi';
  return `${first.toUpperCase()} ${last.toUpperCase()}`;
}

/**
 * A 10-digit virtual account number derived from the account reference (`97` and 8
 * digits), moved to the next free number on a clash.
 *
 * @param accountReference - the merchant's account reference.
 * @param taken - numbers already in use.
 */
export function virtualAccountNumber(accountReference: string, taken: Set<string>): string {
  let candidate = fnv1a(accountReference) % 100_000_000;
  let number = `97${String(candidate).padStart(8, '0')}`;
  while (taken.has(number)) {
    candidate = (candidate + 1) % 100_000_000;
    number = `97${String(candidate).padStart(8, '0')}`;
  }
  return number;
}
