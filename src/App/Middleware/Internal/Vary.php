<?php

declare(strict_types=1);

namespace Kiln\App\Middleware\Internal;

use Kiln\Http\Response;

/**
 * Adds a field to a response's Vary header without duplicating it or widening `Vary: *`.
 *
 * @internal
 */
final class Vary
{
    public static function add(Response $response, string ...$fields): void
    {
        $present = [];
        foreach ($response->headers() as $name => $values) {
            if (strtolower($name) !== 'vary') {
                continue;
            }
            foreach ($values as $value) {
                foreach (explode(',', $value) as $token) {
                    $token = trim($token);
                    if ($token !== '') {
                        $present[strtolower($token)] = $token;
                    }
                }
            }
        }
        if (isset($present['*'])) {
            return;
        }
        $changed = false;
        foreach ($fields as $field) {
            if (!isset($present[strtolower($field)])) {
                $present[strtolower($field)] = $field;
                $changed = true;
            }
        }
        if ($changed) {
            $response->setHeader('Vary', implode(', ', $present));
        }
    }
}
