/**
 * The Business API's order rules, as strict as a production API: the spec's exact shape with
 * no unknown fields at any level (400 VALIDATION_FAILED listing every problem), then the
 * catalogue rules that a well-formed order can still break (422).
 */
import { apiError, type Answer, type Problem } from './answer.js';
import {
  checkCountryCode,
  checkEmail,
  checkLanguageCode,
  checkObject,
  checkPhone,
  checkPositiveInteger,
  checkText,
  MAX_POSTAL_CODE_LENGTH,
} from './fieldChecks.js';

/** Most product lines in one order; the spec shows no maximum. */
const MAX_PRODUCT_LINES = 50;
/** Largest quantity of one product line; above it, 422 QUANTITY_LIMIT. */
const MAX_QUANTITY = 100;

const ORDER_FIELDS = ['businessCustomerId', 'recipient', 'products'] as const;
const RECIPIENT_FIELDS = ['address', 'languageCode', 'email', 'telephoneNumber'] as const;
const ADDRESS_FIELDS = [
  'firstName',
  'lastName',
  'street',
  'streetNumber',
  'postalCode',
  'city',
  'countryCode',
] as const;
const LINE_FIELDS = ['productId', 'quantity'] as const;

/** The shape of an order once {@link validateOrder} accepted it: exactly these fields. */
export interface ValidOrder {
  businessCustomerId: number;
  recipient: {
    address: {
      firstName: string;
      lastName: string;
      street: string;
      streetNumber: number;
      postalCode: string;
      city: string;
      countryCode: string;
    };
    languageCode: string;
    email: string;
    telephoneNumber: string;
  };
  products: { productId: number; quantity: number }[];
}

/** Returns the error answer for `body`, or undefined when it is an acceptable order. */
export function validateOrder(
  body: unknown,
  customers: ReadonlySet<number>,
  products: ReadonlySet<number>,
): Answer | undefined {
  const problems: Problem[] = [];
  const order = checkObject(body, '', ORDER_FIELDS, problems);
  if (order !== undefined) {
    checkPositiveInteger(order.businessCustomerId, 'businessCustomerId', problems);
    const recipient = checkObject(order.recipient, 'recipient', RECIPIENT_FIELDS, problems);
    if (recipient !== undefined) {
      const address = checkObject(recipient.address, 'recipient.address', ADDRESS_FIELDS, problems);
      if (address !== undefined) {
        checkText(address.firstName, 'recipient.address.firstName', problems);
        checkText(address.lastName, 'recipient.address.lastName', problems);
        checkText(address.street, 'recipient.address.street', problems);
        checkPositiveInteger(address.streetNumber, 'recipient.address.streetNumber', problems);
        checkText(address.postalCode, 'recipient.address.postalCode', problems, MAX_POSTAL_CODE_LENGTH);
        checkText(address.city, 'recipient.address.city', problems);
        checkCountryCode(address.countryCode, 'recipient.address.countryCode', problems);
      }
      checkLanguageCode(recipient.languageCode, 'recipient.languageCode', problems);
      checkEmail(recipient.email, 'recipient.email', problems);
      checkPhone(recipient.telephoneNumber, 'recipient.telephoneNumber', problems);
    }
    checkProductLines(order.products, problems);
  }
  if (problems.length > 0) {
    return apiError(
      400,
      'VALIDATION_FAILED',
      `The order is invalid (${problems.length} problem${problems.length === 1 ? '' : 's'}).`,
      { details: problems },
    );
  }
  return checkCatalogue(body as ValidOrder, customers, products);
}

function checkProductLines(value: unknown, problems: Problem[]): void {
  if (value === undefined) {
    problems.push({ path: 'products', problem: 'is required' });
    return;
  }
  if (!Array.isArray(value)) {
    problems.push({ path: 'products', problem: 'must be an array of product lines' });
    return;
  }
  if (value.length === 0) problems.push({ path: 'products', problem: 'must contain at least one product line' });
  if (value.length > MAX_PRODUCT_LINES) {
    problems.push({ path: 'products', problem: `must contain at most ${MAX_PRODUCT_LINES} product lines` });
    return;
  }
  value.forEach((item: unknown, index) => {
    const path = `products[${index}]`;
    const line = checkObject(item, path, LINE_FIELDS, problems);
    if (line === undefined) return;
    checkPositiveInteger(line.productId, `${path}.productId`, problems);
    checkPositiveInteger(line.quantity, `${path}.quantity`, problems);
  });
}

/** Rules about the customer and catalogue: the order is well formed but cannot be taken. */
function checkCatalogue(
  order: ValidOrder,
  customers: ReadonlySet<number>,
  products: ReadonlySet<number>,
): Answer | undefined {
  if (!customers.has(order.businessCustomerId)) {
    return apiError(422, 'CUSTOMER_UNKNOWN', `Business customer ${order.businessCustomerId} is not known.`, {
      details: [{ path: 'businessCustomerId', problem: 'is not a known business customer' }],
    });
  }
  const unknown: Problem[] = [];
  const tooMany: Problem[] = [];
  order.products.forEach((line, index) => {
    if (!products.has(line.productId))
      unknown.push({
        path: `products[${index}].productId`,
        problem: `product ${line.productId} is not in the catalogue`,
      });
    if (line.quantity > MAX_QUANTITY)
      tooMany.push({ path: `products[${index}].quantity`, problem: `must be at most ${MAX_QUANTITY}` });
  });
  if (unknown.length > 0)
    return apiError(422, 'PRODUCT_UNKNOWN', 'The order names products that are not in the catalogue.', {
      details: unknown,
    });
  if (tooMany.length > 0)
    return apiError(422, 'QUANTITY_LIMIT', `A product line may order at most ${MAX_QUANTITY} items.`, {
      details: tooMany,
    });
  return undefined;
}
