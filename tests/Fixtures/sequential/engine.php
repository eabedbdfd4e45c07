<?php

declare(strict_types=1);

// Boots the sequential tier's Runtime in a plain CLI process and reports, as JSON, what each part does.
// Run by tests/Unit/Site/Sequential/RuntimeTest.php (in a child process: the Runtime changes process state).

use Kiln\Site\Sequential\ResponseCapture;
use Kiln\Site\Sequential\Runtime;

require __DIR__ . '/../../../vendor/autoload.php';

function kiln_engine_report(): array
{
    $logged = [];
    $runtime = Runtime::boot(static function (string $level, string $message) use (&$logged): void {
        $logged[] = "$level: $message";
    });
    $report = ['missing' => $runtime->missing(), 'logged' => $logged];

    // Global scope: a top-level variable is a global, seen by `global` in a function of the script.
    $script = tempnam(sys_get_temp_dir(), 'kiln-engine-') . '.php';
    file_put_contents($script, '<?php $kilnTop = "top"; function kiln_engine_read() { global $kilnTop; return $kilnTop; } return kiln_engine_read();');
    $report['global'] = $runtime->scope->run($script);
    $report['global_left'] = $GLOBALS['kilnTop'] ?? null;
    $runtime->state->unsetScriptGlobals();
    $report['global_unset'] = \array_key_exists('kilnTop', $GLOBALS);
    unlink($script);

    // Output and headers of one "request", then a script that ends every buffer.
    $runtime->output->begin();
    $runtime->state->begin(sys_get_temp_dir());
    echo 'body;';
    header('Status: 418 Teapot');
    header('X-Kept: yes');
    header('Bad Name: dropped');
    $refused = [];
    $body = $runtime->output->end();
    $response = ResponseCapture::build($body, static function (string $message) use (&$refused): void {
        $refused[] = $message;
    });
    $runtime->state->end();
    $report['capture'] = ['status' => $response->status(), 'body' => $response->body(), 'kept' => $response->header('X-Kept'),
        'type' => $response->header('Content-Type'), 'status_header' => $response->header('Status'), 'refused' => \count($refused),
        'headers_after' => headers_list()];

    $runtime->output->begin();
    echo 'discarded;';
    while (ob_get_level() > 0) {
        ob_end_clean();
    }
    echo 'direct;';
    $report['ended'] = ['body' => $runtime->output->end(), 'headers_sent_after' => headers_sent()];

    // ini: changed by a "script", back after reset.
    $before = ['precision' => ini_get('precision'), 'error_reporting' => error_reporting()];
    ini_set('precision', '5');
    error_reporting(E_ERROR);
    $runtime->ini->reset();
    $report['ini'] = [$before, ['precision' => ini_get('precision'), 'error_reporting' => error_reporting()]];

    // Uploads and php://input.
    $upload = (string) tempnam(sys_get_temp_dir(), 'kiln-engine-upload-');
    $runtime->uploads?->add($upload);
    $during = is_uploaded_file($upload);
    $runtime->uploads?->clear();
    $report['uploads'] = ['during' => $during, 'after' => is_uploaded_file($upload)];
    unlink($upload);
    $runtime->input?->replace('the body');
    $first = file_get_contents('php://input');
    $runtime->input?->replace('');
    $report['input'] = [$first, file_get_contents('php://input')];

    // The session id is forgotten: the cookie decides again.
    ob_start();
    session_save_path(sys_get_temp_dir());
    $_COOKIE = ['PHPSESSID' => 'kilnengineone'];
    session_start();
    $one = session_id();
    session_write_close();
    $runtime->sessionId?->forget();
    $_COOKIE = ['PHPSESSID' => 'kilnenginetwo'];
    session_start();
    $two = session_id();
    session_write_close();
    $runtime->sessionId?->forget();
    header_remove();
    ob_end_clean();
    $report['session'] = [$one, $two, session_id()];

    // Location after a POST is a 303.
    $runtime->method?->set('POST', '1.1');
    header('Location: /x');
    $post = http_response_code();
    header_remove();
    http_response_code(200);
    $runtime->method?->set('GET', '1.1');
    header('Location: /x');
    $report['location'] = [$post, http_response_code()];
    header_remove();

    // A shutdown function is seen.
    $mark = $runtime->shutdowns?->mark();
    register_shutdown_function(static function (): void {});
    $report['shutdown_seen'] = $mark !== $runtime->shutdowns?->mark();
    return $report;
}

fwrite(STDERR, json_encode(kiln_engine_report(), JSON_THROW_ON_ERROR) . "\n");
