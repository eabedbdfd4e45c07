<?php

declare(strict_types=1);

namespace Kiln\Isolation\Fork;

/**
 * SCGI request encoding (python.ca/scgi/protocol.txt): a netstring of NUL-separated names and values,
 * CONTENT_LENGTH first and SCGI=1 among them, then CONTENT_LENGTH bytes of body. The response is a CGI
 * response (RFC 3875 §6) running until the responder closes the connection. The fork server speaks it
 * because a forked child can then write its output straight to the connection (its fd 1), unframed.
 */
final class Scgi
{
    /**
     * The request head: everything before the body.
     *
     * @param array<string, string> $params CGI meta-variables; CONTENT_LENGTH and SCGI are set here
     */
    public static function head(array $params, int $contentLength): string
    {
        unset($params['CONTENT_LENGTH'], $params['SCGI']);
        $block = "CONTENT_LENGTH\0{$contentLength}\0SCGI\0" . "1\0";
        foreach ($params as $name => $value) {
            $name = (string) $name;
            if ($name === '' || \str_contains($name, "\0") || \str_contains($value, "\0")) {
                throw new \ValueError('SCGI names must be non-empty and names and values free of NUL: ' . \json_encode($name));
            }
            $block .= $name . "\0" . $value . "\0";
        }

        return \strlen($block) . ':' . $block . ',';
    }
}
