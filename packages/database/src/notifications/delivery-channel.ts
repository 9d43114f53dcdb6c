/** Workers LISTEN here; a NOTIFY tells them a delivery is due now. */
export const DELIVERY_CHANNEL = 'herald_deliveries';
