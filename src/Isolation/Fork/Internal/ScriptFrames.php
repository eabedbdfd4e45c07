<?php

declare(strict_types=1);

namespace Kiln\Isolation\Fork\Internal;

/**
 * @internal In a fork server's child: an exception that left the request's script loses the frames of the
 * fork server's entry file, which included the script. Its trace (and that of each `previous` one) then ends
 * where the script began, so PHP's own report of it ("PHP Fatal error:  Uncaught …", then `{main}`) and the
 * script's exception handler see what they would under php-fpm, where the script is the main one.
 */
final class ScriptFrames
{
    /** The exception itself, its traces cut at the first frame of $entry (the includer of the script). */
    public static function cut(\Throwable $error, string $entry): \Throwable
    {
        $seen = [];
        for ($e = $error; $e !== null && !isset($seen[\spl_object_id($e)]); $e = $e->getPrevious()) {
            $seen[\spl_object_id($e)] = true;
            $trace = $e->getTrace();
            foreach ($trace as $i => $frame) {
                if (($frame['file'] ?? null) === $entry) {
                    $property = new \ReflectionProperty($e instanceof \Exception ? \Exception::class : \Error::class, 'trace');
                    $property->setValue($e, \array_slice($trace, 0, $i));
                    break;
                }
            }
        }

        return $error;
    }
}
