<?php
if (!function_exists('dev_fixture_helper')) {
    function dev_fixture_helper(): string
    {
        return 'function';
    }
}
echo dev_fixture_helper();
