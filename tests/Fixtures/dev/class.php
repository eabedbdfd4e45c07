<?php
if (!class_exists('DevFixtureThing', false)) {
    final class DevFixtureThing
    {
    }
}
echo 'class';
