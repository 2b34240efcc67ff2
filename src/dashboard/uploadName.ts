/**
 * Whether an upload's name (what the browser says the file is called) can name a file: it becomes
 * the spooled copy's name, the batch's file name, and the name of its results and rejects files,
 * which people download and open on any system. A name that cannot be a file there is refused with
 * 400 and a sentence (UPLOAD_NAME_INVALID), never guessed at and never answered with a path.
 */

/**
 * The longest name taken, in characters (the spool keeps 120) and bytes: the results file adds `.results.csv`
 * and must stay under every file system's 255 bytes.
 */
const MAX_CHARACTERS = 120;
const MAX_BYTES = 200;

/** Device names Windows reserves, with or without an extension (`CON`, `nul.csv`, `COM1.txt`). */
const RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)(\..*)?$/i;
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** Characters Windows refuses in a name (besides the separators and control characters above). */
const WINDOWS_FORBIDDEN = /[<>:"|?*]/;

/** The refusal of an upload whose name cannot name a file (its HTTP status is the catalogue's: 400), or undefined. */
export function uploadNameRefusal(name: string): { code: 'UPLOAD_NAME_INVALID'; message: string } | undefined {
  const message = uploadNameProblem(name);
  return message === undefined ? undefined : { code: 'UPLOAD_NAME_INVALID', message };
}

/** Why `name` cannot name an uploaded file, in a sentence that quotes it safely; undefined when it can. */
function uploadNameProblem(name: string): string | undefined {
  const shown = JSON.stringify(name.length > 60 ? `${name.slice(0, 60)}…` : name);
  if (name.trim() === '') return 'the upload has no file name: pick a file (orders.csv, orders.json)';
  if (/^\.+$/.test(name)) return `${shown} is not a file name: pick a file (orders.csv, orders.json)`;
  if (/[/\\]/.test(name)) return `${shown} is a path, not a file name: send the file's name alone`;
  if (CONTROL.test(name)) return `${shown} contains control characters: rename the file`;
  if (WINDOWS_FORBIDDEN.test(name))
    return `${shown} contains < > : " | ? or *, which no Windows file name may: rename the file`;
  if (RESERVED.test(name))
    return `${shown} is a device name on Windows (CON, PRN, AUX, NUL, COM1-9, LPT1-9): rename the file`;
  if (/[. ]$/.test(name)) return `${shown} ends with a dot or a space, which Windows drops: rename the file`;
  if ([...name].length > MAX_CHARACTERS || Buffer.byteLength(name) > MAX_BYTES)
    return `the file name is longer than ${MAX_CHARACTERS} characters (or ${MAX_BYTES} bytes): rename the file shorter, keeping its extension`;
  if (!/\.[^.]+$/.test(name) || /^\.[^.]+$/.test(name))
    return `${shown} has no extension: name it .csv, .tsv, .txt, .json, .ndjson or .jsonl, as its format is`;
  return undefined;
}
