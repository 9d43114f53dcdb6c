/** Application ids are the platform's own positive integers, stored as PostgreSQL `integer`. */
export const APPLICATION_ID_MAX = 2_147_483_647;
